// libjankprobe.so is assembled from the per-capability static libraries (plt/, hook/, input/, ...);
// this file only gives the shared library target a source of its own.
namespace jp {
int lib_anchor_unused = 0;
}  // namespace jp

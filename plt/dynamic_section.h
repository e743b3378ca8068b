// The DT_* entries the hook engine needs, read from PT_DYNAMIC. All table addresses are normalised to
// link-time virtual addresses: glibc's ld.so rewrites the d_ptr entries of a writable .dynamic into
// absolute addresses once it has mapped a module; bionic leaves them as they are in the file.
#ifndef JANKPROBE_PLT_DYNAMIC_SECTION_H_
#define JANKPROBE_PLT_DYNAMIC_SECTION_H_

#include <cstdint>

#include "plt/segment_map.h"
#include "plt/status.h"

namespace jp::plt {

// Android's packed relocation tags (bionic's elf.h; not in glibc's).
constexpr uint64_t kDtAndroidRel = 0x6000000F;
constexpr uint64_t kDtAndroidRelSz = 0x60000010;
constexpr uint64_t kDtAndroidRela = 0x60000011;
constexpr uint64_t kDtAndroidRelaSz = 0x60000012;

// A value of 0 means "tag absent": no table of a shared object can start at vaddr 0, where the ELF
// header lives.
struct DynamicInfo {
  uint64_t strtab = 0, strsz = 0;
  uint64_t symtab = 0, syment = 0;
  uint64_t hash = 0, gnu_hash = 0;
  uint64_t jmprel = 0, pltrelsz = 0, pltrel = 0;
  uint64_t rel = 0, relsz = 0, relent = 0;
  uint64_t rela = 0, relasz = 0, relaent = 0;
  uint64_t android_rel = 0, android_relsz = 0;
  uint64_t android_rela = 0, android_relasz = 0;
  uint64_t versym = 0, verneed = 0, verneednum = 0, verdef = 0, verdefnum = 0;
  // True when the d_ptr values were absolute addresses (glibc-relocated .dynamic) and were rebased.
  bool pointers_were_absolute = false;
};

struct DynamicSource {
  uint64_t vaddr = 0;  // PT_DYNAMIC p_vaddr
  uint64_t size = 0;   // p_filesz for file images, p_memsz for loaded modules
  bool is64 = false;
  bool loaded = false;
  uint64_t bias = 0;   // load bias of a loaded module
};

Status ParseDynamic(const SegmentMap& map, const DynamicSource& src, DynamicInfo* out);

}  // namespace jp::plt

#endif  // JANKPROBE_PLT_DYNAMIC_SECTION_H_

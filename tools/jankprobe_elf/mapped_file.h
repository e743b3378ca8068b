// A whole file mapped copy-on-write, so libelf (elf_memory wants a writable buffer) and the engine's
// parser read exactly the same bytes without either one being able to change the file on disk.
#ifndef JANKPROBE_TOOLS_JANKPROBE_ELF_MAPPED_FILE_H_
#define JANKPROBE_TOOLS_JANKPROBE_ELF_MAPPED_FILE_H_

#include <cstddef>
#include <cstdint>
#include <string>

namespace jp::elftool {

class MappedFile {
 public:
  MappedFile() = default;
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  // Maps `path`; false with a readable reason in *error (missing, not a regular file, empty...).
  bool Open(const std::string& path, std::string* error);

  uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace jp::elftool

#endif  // JANKPROBE_TOOLS_JANKPROBE_ELF_MAPPED_FILE_H_

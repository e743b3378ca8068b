#include "tools/jankprobe_elf/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace jp::elftool {

MappedFile::~MappedFile() {
  if (data_ != nullptr) munmap(data_, size_);
}

bool MappedFile::Open(const std::string& path, std::string* error) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *error = path + ": cannot open: " + std::strerror(errno);
    return false;
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    *error = path + ": cannot stat: " + std::strerror(errno);
    close(fd);
    return false;
  }
  if (!S_ISREG(st.st_mode)) {
    *error = path + ": not a regular file";
    close(fd);
    return false;
  }
  if (st.st_size == 0) {
    *error = path + ": empty file";
    close(fd);
    return false;
  }
  // MAP_PRIVATE + PROT_WRITE: libelf may write into its buffer; those writes stay in our copy.
  void* p = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  int mmap_errno = errno;
  close(fd);
  if (p == MAP_FAILED) {
    *error = path + ": cannot map: " + std::strerror(mmap_errno);
    return false;
  }
  data_ = static_cast<uint8_t*>(p);
  size_ = static_cast<size_t>(st.st_size);
  return true;
}

}  // namespace jp::elftool

#include "bench/cold_caches.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

namespace jp::bench {
namespace {

constexpr size_t kPage = 4096;
constexpr size_t kLine = 64;
constexpr size_t kCodePages = 1024;  // twice the L2 instruction TLB of the hosts we run on (512 entries)

// Twice the last-level cache, at least 64 MiB (sysconf may not know it, e.g. under a hypervisor).
size_t DataSize() {
  long llc = -1;
#ifdef _SC_LEVEL3_CACHE_SIZE
  llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
#endif
  size_t size = size_t{64} << 20;
  if (llc > 0 && 2 * static_cast<size_t>(llc) > size) size = 2 * static_cast<size_t>(llc);
  return size;
}

// A return instruction, the whole function on each code page; empty where we do not know the encoding.
bool WriteReturn(char* at) {
#if defined(__x86_64__) || defined(__i386__)
  *at = static_cast<char>(0xc3);  // ret
  return true;
#elif defined(__aarch64__)
  const uint32_t ret = 0xd65f03c0;  // ret (x30)
  memcpy(at, &ret, sizeof ret);
  return true;
#else
  (void)at;
  return false;
#endif
}

}  // namespace

ColdCaches::ColdCaches() {
  data_size_ = DataSize();
  void* d = mmap(nullptr, data_size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (d == MAP_FAILED) {
    why_ = std::string("mmap of the eviction buffer: ") + strerror(errno);
    return;
  }
  // 4 KiB pages: a huge page would cover the buffer with a few TLB entries and leave ours in place.
  madvise(d, data_size_, MADV_NOHUGEPAGE);
  data_ = static_cast<char*>(d);
  for (size_t i = 0; i < data_size_; i += kPage) data_[i] = 1;  // resident now, no fault while timing

  code_size_ = kCodePages * kPage;
  void* c = mmap(nullptr, code_size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (c == MAP_FAILED) {
    why_ = std::string("code pages not mapped (instruction TLB kept): ") + strerror(errno);
    return;
  }
  madvise(c, code_size_, MADV_NOHUGEPAGE);
  bool written = true;
  for (size_t i = 0; i < code_size_ && written; i += kPage) written = WriteReturn(static_cast<char*>(c) + i);
  if (!written || mprotect(c, code_size_, PROT_READ | PROT_EXEC) != 0) {
    why_ = written ? std::string("mprotect of the code pages: ") + strerror(errno)
                   : std::string("no return instruction known for this architecture (instruction TLB kept)");
    munmap(c, code_size_);
    return;
  }
  __builtin___clear_cache(static_cast<char*>(c), static_cast<char*>(c) + code_size_);
  code_ = static_cast<char*>(c);
}

ColdCaches::~ColdCaches() {
  if (data_ != nullptr) munmap(data_, data_size_);
  if (code_ != nullptr) munmap(code_, code_size_);
}

void ColdCaches::Evict() {
  if (data_ == nullptr) return;
  // Volatile reads: the compiler may not drop or merge them. One byte per line is the whole line.
  const volatile char* p = data_;
  unsigned sum = 0;
  for (size_t i = 0; i < data_size_; i += kLine) sum += static_cast<unsigned char>(p[i]);
  asm volatile("" : : "r"(sum));
  if (code_ != nullptr) {
    for (size_t i = 0; i < code_size_; i += kPage) reinterpret_cast<void (*)()>(code_ + i)();
  }
}

}  // namespace jp::bench

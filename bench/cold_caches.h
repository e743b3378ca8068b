// Makes the calling thread's next steps run cold, without a sleep: what a wake costs on a host where the
// thread comes back from idle with empty caches (a phone core out of deep idle, a KVM vCPU that was
// descheduled: session 11 measured ~170 ns per line and ~0.5-0.8 us per page first touched after a 5 ms
// sleep here). A real sleep also brings the hypervisor's idle and wake, which move a wait's CPU time by
// tens of microseconds between runs (looper_poll_bench's ColdWake); an eviction leaves only the misses, so
// the difference between two sides measured alike is ours alone, at a resolution of tens of nanoseconds.
//
// Evict():
// - reads one byte of every line of a buffer twice the last-level cache (data caches, and with 16 K 4 KiB
//   pages the data TLB and the page-walk caches);
// - calls a one-instruction function on each of 1024 code pages of its own (the instruction TLB; the
//   instruction cache goes with the L2, inclusive of L1 on the hosts we run on).
// ~25-30 ms per call on the 2-vCPU guest of sessions 11-13 (a page walk per 4 KiB of the buffer). Not
// thread-safe; one per benchmark binary.
#ifndef JANKPROBE_BENCH_COLD_CACHES_H_
#define JANKPROBE_BENCH_COLD_CACHES_H_

#include <cstddef>
#include <string>

namespace jp::bench {

class ColdCaches {
 public:
  // Maps the buffer and the code pages; ok() says whether that worked (why() says why not).
  ColdCaches();
  ~ColdCaches();
  ColdCaches(const ColdCaches&) = delete;
  ColdCaches& operator=(const ColdCaches&) = delete;

  bool ok() const { return data_ != nullptr; }
  const std::string& why() const { return why_; }
  // Data caches, data TLB, page-walk caches; the instruction TLB when the code pages could be made.
  void Evict();
  bool evicts_code() const { return code_ != nullptr; }

 private:
  char* data_ = nullptr;
  size_t data_size_ = 0;
  char* code_ = nullptr;
  size_t code_size_ = 0;
  std::string why_;
};

}  // namespace jp::bench

#endif  // JANKPROBE_BENCH_COLD_CACHES_H_

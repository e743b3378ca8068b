// The main-thread stacks sampled while one message runs (every looper.sample_interval_ms once it has run
// looper.sample_after_ms). A sample identical to the previous one is merged into it with a count, so a
// message stuck in one place for seconds costs one entry, not one per sample.
//
// Verdict: when two consecutive samples show the same stack, the main thread did not move between them:
// a confirmed lag (that frame did not finish). Samples that all differ mean it was busy but progressing
// (or the samples were too few): a suspected lag.
#ifndef JANKPROBE_LOOPER_STACK_SAMPLES_H_
#define JANKPROBE_LOOPER_STACK_SAMPLES_H_

#include <cstdint>
#include <string>
#include <vector>

namespace jp::looper {

struct SampleRun {
  std::string stack;  // frames, innermost first, one per line ("at pkg.Class.method(File.java:12)")
  uint32_t count = 0;
  uint64_t first_ns = 0;  // CLOCK_MONOTONIC of the first and last sample merged here
  uint64_t last_ns = 0;
};

class SampleSet {
 public:
  static constexpr size_t kMaxRuns = 32;  // distinct consecutive stacks kept; later ones are only counted

  void Add(const std::string& stack, uint64_t at_ns);
  void AddError(const std::string& why);
  void Clear();

  bool empty() const { return runs_.empty(); }
  bool confirmed() const;
  uint32_t samples() const { return samples_; }
  uint32_t dropped() const { return dropped_; }
  uint32_t errors() const { return errors_; }
  const std::string& last_error() const { return last_error_; }
  const std::vector<SampleRun>& runs() const { return runs_; }
  // The run seen most often (the later one on a tie: where the message ended up), or nullptr.
  const SampleRun* Dominant() const;

 private:
  std::vector<SampleRun> runs_;
  uint32_t samples_ = 0;
  uint32_t dropped_ = 0;
  uint32_t errors_ = 0;
  std::string last_error_;
};

}  // namespace jp::looper

#endif  // JANKPROBE_LOOPER_STACK_SAMPLES_H_

#include "looper/stack_samples.h"

namespace jp::looper {

void SampleSet::Add(const std::string& stack, uint64_t at_ns) {
  ++samples_;
  if (!runs_.empty() && runs_.back().stack == stack) {
    ++runs_.back().count;
    runs_.back().last_ns = at_ns;
    return;
  }
  if (runs_.size() >= kMaxRuns) {
    ++dropped_;
    return;
  }
  runs_.push_back(SampleRun{stack, 1, at_ns, at_ns});
}

void SampleSet::AddError(const std::string& why) {
  ++errors_;
  last_error_ = why;
}

void SampleSet::Clear() {
  runs_.clear();
  samples_ = dropped_ = errors_ = 0;
  last_error_.clear();
}

bool SampleSet::confirmed() const {
  for (const SampleRun& r : runs_) {
    if (r.count >= 2) return true;
  }
  return false;
}

const SampleRun* SampleSet::Dominant() const {
  const SampleRun* best = nullptr;
  for (const SampleRun& r : runs_) {
    if (!best || r.count >= best->count) best = &r;
  }
  return best;
}

}  // namespace jp::looper

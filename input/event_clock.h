// The event clock moved to hook/event_clock.h (one process-wide clock for the input and looper monitors).
// This name stays for the files outside input/ that still include it (bench/input_bench.cc,
// tests/input/input_harness.h) until they include the new one.
#ifndef JANKPROBE_INPUT_EVENT_CLOCK_H_
#define JANKPROBE_INPUT_EVENT_CLOCK_H_

#include "hook/event_clock.h"

namespace jp::input {
using hook::EventClock;
}  // namespace jp::input

#endif  // JANKPROBE_INPUT_EVENT_CLOCK_H_

// Placement of the input monitor's per-event code. Between two events the app's thread runs four
// syscalls whose kernel code evicts ours from the L1 instruction cache and the branch/uop caches, so the
// in-situ cost of a round trip depends on how many code lines the event path touches and how dense they
// are, not only on its instruction count: with the functions spread over 32 KB of .text between cold
// code (status JSON, verdicts, control paths), ~50 of the ~220 user-space cycles the monitor added per
// round trip were front-end stalls (bench/input_bench RoundTripPaired, JP_BENCH_PMU=frontend_stalls).
// Marked hot, the functions an event runs through are grouped by the linker in .text.hot; the rare
// branches inside them (rejected packets, fd mode, arming a deadline, a lagged finish) are separate cold
// functions, out of the hot lines. Measured: -20 user cycles per round trip (~220 -> ~198).
#ifndef JANKPROBE_INPUT_HOT_PATH_H_
#define JANKPROBE_INPUT_HOT_PATH_H_

#define JP_INPUT_HOT __attribute__((hot))
// An entry of the hot path (the tracker's ReceivedAt/SentAt per layout): also flattened, everything it calls that
// is visible and not cold inlined into one function.
#define JP_INPUT_HOT_ENTRY __attribute__((hot, flatten))
#define JP_INPUT_COLD __attribute__((cold, noinline))

#endif  // JANKPROBE_INPUT_HOT_PATH_H_

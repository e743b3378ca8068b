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
//
// The entries and the proxies start on a cache-line boundary (aligned(64)): the owner's usual event runs
// each from its top to its usual exit, so it touches ceil(length / 64) code lines only where the function
// starts a line (at e6df731 SentAt<6> ran 517 bytes from byte 32 of a line: 9 lines; ProxyRecvfrom 183
// bytes from byte 16: 4). The padding is at most 63 bytes before each, in the ordered steady text.
#define JP_INPUT_HOT_ENTRY __attribute__((hot, flatten, aligned(64)))
#define JP_INPUT_PROXY __attribute__((hot, aligned(64)))
#define JP_INPUT_COLD __attribute__((cold, noinline))

// Marks a rare exit of a hot entry (a block that leaves by a tail call into a JP_INPUT_COLD function): a
// cold label, so that GCC moves the block (its argument moves and jump, and the padding that aligned the
// block after it) into the entry's .cold part (.text.unlikely.<entry>, which lib/startup_order.ld places
// with the cold parts of the hot functions). The tail call into a cold function alone did not: GCC kept
// each such block between the hot instructions. GCC splits a function into hot and cold parts only when it
// is not COMDAT, which an implicit template instantiation is: hence the entries are explicit
// specializations (input_tracker.h, ReceivedAt / SentAt). Clang has no cold labels (it warns): there the
// blocks stay where it puts them.
#if defined(__clang__)
#define JP_INPUT_RARE_EXIT
#else
#define JP_INPUT_RARE_EXIT_CAT2(a, b) a##b
#define JP_INPUT_RARE_EXIT_CAT(a, b) JP_INPUT_RARE_EXIT_CAT2(a, b)
#define JP_INPUT_RARE_EXIT JP_INPUT_RARE_EXIT_CAT(jp_input_rare_exit_, __COUNTER__) : __attribute__((cold, unused));
#endif

#endif  // JANKPROBE_INPUT_HOT_PATH_H_

#!/usr/bin/env python3
"""The input monitor's round-trip figure (BENCHMARKS.md "Input monitor"), robust to a noisy host.

A plain `--benchmark_repetitions=5` run of input_bench drifts by +-30 ns between variants on a shared
2-core machine, more than the monitor's cost. So each given input_bench binary runs RoundTrip with random
interleaving of its variants, 10 repetitions, three times, the binaries alternating (e.g. the build before
and after a change); the medians over all 30 samples per variant are printed with the differences that
matter: RoundTrip/1 - RoundTrip/0 (the monitor) and RoundTrip/2 - RoundTrip/0 (the PLT detour alone).

    python3 bench/compare_roundtrip.py build/<dir>/bench/input_bench [build/<other>/bench/input_bench ...]

--paired N: the figure of record instead. Runs RoundTripPaired (monitor on/off batches alternated in one
process, median of 150 group differences) N times per binary, the binaries alternating, and prints every
run's added_ns and off_ns (and the user-space cycles added, where the PMU is readable), then per binary
the median over the calm runs: this host has a second mode
(another process on the core) in which off_ns rises above ~860 ns and added_ns by ~20 ns; such runs are
listed but not judged (--calm-below sets the off_ns bound).

    python3 bench/compare_roundtrip.py --paired 10 <before>/input_bench <after>/input_bench
"""
import json
import statistics
import subprocess
import sys

ROUNDS = 3


def run(binary):
    out = subprocess.run([binary, "--benchmark_filter=RoundTrip/", "--benchmark_repetitions=10",
                          "--benchmark_min_time=0.1", "--benchmark_enable_random_interleaving=true",
                          "--benchmark_format=json"], capture_output=True, text=True, check=True).stdout
    samples = {}
    for b in json.loads(out)["benchmarks"]:
        if b.get("run_type") == "iteration":
            samples.setdefault(b["run_name"], []).append(b["cpu_time"])
    return samples


def run_paired(binary):
    out = subprocess.run([binary, "--benchmark_filter=RoundTripPaired", "--benchmark_format=json"],
                         capture_output=True, text=True, check=True).stdout
    b = json.loads(out)["benchmarks"][0]
    if b.get("error_occurred"):
        sys.exit("%s: %s" % (binary, b.get("error_message")))
    return b["added_ns"], b["off_ns"], b.get("added_ucycles")


def main_paired(rounds, calm_below, binaries):
    runs = {b: [] for b in binaries}
    for r in range(rounds):
        for b in binaries:
            added, off, ucycles = run_paired(b)
            runs[b].append((added, off, ucycles))
            print("round %2d  %-48s added %6.1f ns  off %6.1f ns%s%s" %
                  (r + 1, b, added, off, "" if ucycles is None else "  user cycles %+.1f" % ucycles,
                   "" if off < calm_below else "  (high mode)"), flush=True)
    for b in binaries:
        calm = [a for a, off, _ in runs[b] if off < calm_below]
        every = " ".join("%.1f" % a for a, _, _ in runs[b])
        cycles = [c for _, _, c in runs[b] if c is not None]
        print(b)
        print("  every run: %s" % every)
        if calm:
            print("  calm runs (off < %.0f ns): %d, median added %.1f ns, min %.1f, max %.1f" %
                  (calm_below, len(calm), statistics.median(calm), min(calm), max(calm)))
        else:
            print("  no calm run")
        if cycles:
            print("  user-space cycles added per round trip (every run): median %.1f, min %.1f, max %.1f" %
                  (statistics.median(cycles), min(cycles), max(cycles)))


def main(binaries):
    if not binaries:
        sys.exit(__doc__)
    if binaries[0] == "--paired":
        rounds = int(binaries[1])
        rest = binaries[2:]
        calm_below = 860.0
        if rest and rest[0] == "--calm-below":
            calm_below = float(rest[1])
            rest = rest[2:]
        return main_paired(rounds, calm_below, rest)
    acc = {b: {} for b in binaries}
    for _ in range(ROUNDS):
        for b in binaries:
            for name, values in run(b).items():
                acc[b].setdefault(name, []).extend(values)
    for b in binaries:
        m = {name: statistics.median(v) for name, v in acc[b].items()}
        print(b)
        for name, value in sorted(m.items()):
            print("  %-24s %8.1f ns (median of %d)" % (name, value, len(acc[b][name])))
        print("  monitor (1-0): %+.1f ns   detour alone (2-0): %+.1f ns" %
              (m["RoundTrip/1"] - m["RoundTrip/0"], m["RoundTrip/2"] - m["RoundTrip/0"]))


if __name__ == "__main__":
    main(sys.argv[1:])

#!/usr/bin/env python3
"""The input monitor's round-trip figure (BENCHMARKS.md "Input monitor"), robust to a noisy host.

A plain `--benchmark_repetitions=5` run of input_bench drifts by +-30 ns between variants on a shared
2-core machine, more than the monitor's cost. So each given input_bench binary runs RoundTrip with random
interleaving of its variants, 10 repetitions, three times, the binaries alternating (e.g. the build before
and after a change); the medians over all 30 samples per variant are printed with the differences that
matter: RoundTrip/1 - RoundTrip/0 (the monitor) and RoundTrip/2 - RoundTrip/0 (the PLT detour alone).

    python3 bench/compare_roundtrip.py build/<dir>/bench/input_bench [build/<other>/bench/input_bench ...]
"""
import json
import statistics
import subprocess
import sys

ROUNDS = 3


def run(binary):
    out = subprocess.run([binary, "--benchmark_filter=RoundTrip", "--benchmark_repetitions=10",
                          "--benchmark_min_time=0.1", "--benchmark_enable_random_interleaving=true",
                          "--benchmark_format=json"], capture_output=True, text=True, check=True).stdout
    samples = {}
    for b in json.loads(out)["benchmarks"]:
        if b.get("run_type") == "iteration":
            samples.setdefault(b["run_name"], []).append(b["cpu_time"])
    return samples


def main(binaries):
    if not binaries:
        sys.exit(__doc__)
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

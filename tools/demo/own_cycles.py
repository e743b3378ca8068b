#!/usr/bin/env python3
"""The main thread's CPU time spent in jankprobe's own code while the demo app runs, measured directly.

Why: demo_bench's A/B measures the difference between on and off slices; its instructions resolve ~50 k/s,
but its cycles and CPU time move by milliseconds per second between slices of the same work on a shared
host, so it cannot say what our code costs in time *in situ*, where the main thread wakes up dozens of
times a second with cold caches. The per-item benchmarks (bench/*_bench) time hot loops: a lower bound.
This script samples the app's main thread on user-mode cycles (perf record -e cycles:u, one sample every
PERIOD cycles, cache misses and all) and counts the samples that land in jankprobe's code: libjankprobe.so,
our Java classes (com.jankprobe.*, JIT-compiled or interpreted frames the JIT map names) and the JDK
methods only our Java calls on this path (the direct-buffer views). Cycles become time at the core clock
measured on a busy loop under the same perf. What it does not see: costs we cause in the app's own code
(a type check our list adds to MessageQueue.next, the JIT's work, caches we evict); demo_bench's A/B
instructions cover those.

Needs perf (linux-perf) with access to the thread's counters (perf_event_paranoid <= 2 for one's own
processes) and jcmd (the JDK) for the JIT map.

Hosts without a PMU (a VM whose kernel says "PMU not available due to virtualization": perf stat prints
cycles as <not supported>) get the software clock instead: perf record -e cpu-clock, one sample every PERIOD ns
of the thread's CPU time (default 100 us; the timer's remainder carries across the thread's sleeps, so
short wakes are sampled in proportion to their time). A sample is then PERIOD ns, no calibration; kernel-mode
samples are left out as cycles:u leaves them out. Each sample is a timer interrupt, which a guest pays for:
on a KVM guest (session 11) the main thread's user time read 7.1 ms/s at 100 us, 9.0 at 50 us and 176 at
10 us (the kernel's floor), where it is ~8-10 ms/s unsampled: keep the period at 50 us or more, and compare
runs at one period. Fewer samples than cycles:u: use a longer --seconds (1 us/s of ours over 120 s at
100 us is ~1 sample, so figures under ~20 us/s are noise there; the share of the main thread's time holds).

A blind spot: the JIT map names compiled methods only, so Java of ours that C2 inlined into a caller
(Timed.queueIdle into MessageQueue.next(), which happens in some runs and not in others) is charged to that
caller and missing from "ours". --no-inline-ours keeps HotSpot from inlining com.jankprobe methods
(CompileCommand dontinline), so their samples stay theirs: comparable across runs, at the cost of a real
call per wrapper call (an upper bound for our Java, where the default is a lower bound in such runs).

Usage: own_cycles.py BUILD_DIR [--config bench-all.json] [--seconds 30] [--warmup 5] [--period N]
                     [--event auto|cycles|cpu-clock] [--keep DIR] [--no-inline-ours]
"""
import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

# What counts as ours (category, test on (symbol, dso basename)).
JDK_FOR_US = re.compile(r"java\.nio\.(Direct(Long|Int)BufferU|(Long|Int)Buffer|Buffer)\.|ScopedMemoryAccess")


def category(sym, dso):
    if dso == "libjankprobe.so":
        return "native (libjankprobe.so)"
    if "com.jankprobe." in sym:
        return "java (com.jankprobe)"
    if JDK_FOR_US.search(sym):
        return "jdk direct buffers (our Java's)"
    return None


def have_cycles():
    """Whether this host counts user-mode cycles (no PMU in a VM: perf stat says <not supported>)."""
    r = subprocess.run(["perf", "stat", "-x", ",", "-e", "cycles:u", "true"], capture_output=True, text=True)
    return r.returncode == 0 and not any(l.startswith("<not") for l in r.stderr.splitlines())


def core_ghz():
    """Cycles per ns of a user-mode busy loop on this host, under perf stat."""
    loop = "x = 0\nfor i in range(3000000): x += i"
    out = subprocess.run(["perf", "stat", "-x", ",", "-e", "cycles:u,task-clock", sys.executable, "-c", loop],
                         capture_output=True, text=True, check=True).stderr
    cycles = msec = None
    for line in out.splitlines():
        parts = line.split(",")
        if len(parts) > 2 and parts[2].startswith("cycles"):
            cycles = float(parts[0])
        elif len(parts) > 2 and parts[2].startswith("task-clock"):
            msec = float(parts[0])
    if not cycles or not msec:
        raise SystemExit("own_cycles: cannot calibrate the clock from perf stat:\n" + out)
    return cycles / (msec * 1e6)


def find_child(parent_pid, name, timeout_s=20):
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        out = subprocess.run(["pgrep", "-P", str(parent_pid), "-f", name], capture_output=True, text=True).stdout
        if out.strip():
            return int(out.split()[0])
        time.sleep(0.2)
    return None


def main_schedstat(pid):
    """(ns on CPU, times scheduled in) of the process's thread named main, or None."""
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/comm" % (pid, tid)) as f:
                if f.read().strip() != "main":
                    continue
            with open("/proc/%d/task/%s/schedstat" % (pid, tid)) as f:
                ns, _, runs = f.read().split()[:3]
                return int(ns), int(runs)
        except (OSError, ValueError):
            continue
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("build_dir")
    ap.add_argument("--config", default="bench-all.json")
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--warmup", type=float, default=5)
    ap.add_argument("--period", type=int, help="cycles (default 5000) or ns of CPU time (cpu-clock: 100000)")
    ap.add_argument("--event", choices=["auto", "cycles", "cpu-clock"], default="auto",
                    help="cycles:u where the host counts cycles, else the software cpu-clock (auto)")
    ap.add_argument("--keep", help="keep perf.data and the main thread's samples in this directory")
    ap.add_argument("--no-inline-ours", action="store_true",
                    help="keep HotSpot from inlining com.jankprobe methods into their callers (see above)")
    a = ap.parse_args()
    demo = os.path.join(a.build_dir, "tools", "jankprobe-demo")
    if not os.access(demo, os.X_OK) or not shutil.which("perf") or not shutil.which("jcmd"):
        raise SystemExit("own_cycles: needs %s, perf and jcmd" % demo)
    clock = a.event == "cpu-clock" or (a.event == "auto" and not have_cycles())
    if clock:
        event, period, ghz = "cpu-clock", a.period or 100000, 1.0  # a sample is `period` ns: 1 "cycle" per ns
    else:
        event, period, ghz = "cycles:u", a.period or 5000, core_ghz()
    work = a.keep or tempfile.mkdtemp(prefix="own_cycles.")
    os.makedirs(work, exist_ok=True)
    data = os.path.join(work, "perf.data")
    cmd = ["perf", "record", "-q", "-e", event, "-c", str(period), "-o", data, "--", demo, "--bench",
           str(a.seconds), "--warmup", str(a.warmup), "--jankprobe", "on", "--config", a.config]
    env = dict(os.environ)
    if a.no_inline_ours:
        env["JP_DEMO_JVM_ARGS"] = (env.get("JP_DEMO_JVM_ARGS", "") +
                                   " -XX:CompileCommand=quiet -XX:CompileCommand=dontinline,com.jankprobe.*::*").strip()
    perf = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    child = find_child(perf.pid, "jankprobe-demo")
    if child is None:
        perf.kill()
        raise SystemExit("own_cycles: the demo did not start")
    # The main thread's own CPU clock and context switches over (about) the measured window, unsampled: the
    # total the samples' share applies to, and the wake count that turns us/s into ns per wake (the cost of
    # a wake is what moves between hosts: after a sleep every line we touch may come from memory).
    started = time.time()
    time.sleep(max(0.5, a.warmup + 1))
    before = main_schedstat(child)
    time.sleep(max(0.5, a.seconds - 3))
    after = main_schedstat(child)
    measured = time.time() - started - max(0.5, a.warmup + 1)
    # The JIT map while the app still runs (its compiled methods then are the ones the samples hit).
    subprocess.run(["jcmd", str(child), "Compiler.perfmap"], capture_output=True)
    out, _ = perf.communicate()
    if perf.returncode != 0:
        raise SystemExit("own_cycles: perf/demo failed (%d): %s" % (perf.returncode, out[-400:]))
    script = subprocess.run(["perf", "script", "-i", data, "-F", "comm,tid,time,ip,sym,dso"], capture_output=True,
                            text=True).stdout
    rows = []
    for line in script.splitlines():
        m = re.match(r"\s*main\s+(\d+)\s+([\d.]+):\s+[0-9a-f]+\s+(.*)\s+\((.*)\)\s*$", line)
        if m and not m.group(4).startswith("[kernel"):  # user mode only, as cycles:u counts
            rows.append((float(m.group(2)), m.group(3).strip(), os.path.basename(m.group(4))))
    if not rows:
        raise SystemExit("own_cycles: no samples of the app's main thread")
    # The measured window: after the warm-up, a second of margin at both ends.
    t0 = rows[0][0] + a.warmup + 1
    t1 = rows[0][0] + a.warmup + a.seconds - 1
    window = [r for r in rows if t0 <= r[0] <= t1]
    span = t1 - t0
    per_s = period / span  # cycles per second for one sample
    cats = collections.Counter()
    syms = collections.Counter()
    for _, sym, dso in window:
        c = category(sym, dso)
        if c:
            cats[c] += 1
            syms[sym[:90]] += 1
    total = len(window)
    ours = sum(cats.values())
    us = lambda n: n * per_s / (ghz * 1e3)  # noqa: E731
    if clock:
        print("own_cycles: %s, %s, %.0f s measured, cpu-clock: %d ns of CPU time/sample (no cycle counter here)" %
              (demo, a.config, span, period))
    else:
        print("own_cycles: %s, %s, %.0f s measured, %d cycles/sample, core %.2f GHz (busy loop)" %
              (demo, a.config, span, period, ghz))
    print("  main thread, user mode: %7.1f us/s (%d samples)" % (us(total), total))
    wakes = None
    if before and after and measured > 0:
        wakes = (after[1] - before[1]) / measured
        print("  main thread, unsampled:  %7.1f us/s on CPU (user + kernel, schedstat), %.0f wakes/s" %
              ((after[0] - before[0]) / measured / 1e3, wakes))
    for c, n in cats.most_common():
        print("  %-34s %7.1f us/s (%d samples)" % (c, us(n), n))
    print("  %-34s %7.1f us/s (%.1f %% of the main thread's user time)" % ("ours", us(ours), 100.0 * ours / total))
    if wakes:
        print("  %-34s %7.0f ns per wake of the main thread" % ("ours", us(ours) * 1e3 / wakes))
    wrapper = sum(n for sym, n in syms.items() if "TimingIdleHandlerList$Timed.queueIdle" in sym)
    if not a.no_inline_ours and wrapper * 20 < ours:
        print("  note: the idle wrapper has %d samples (of %d ours): if C2 inlined it into MessageQueue.next() its "
              "cost is charged there; --no-inline-ours keeps it visible" % (wrapper, ours))
    print("  by symbol:")
    for s, n in syms.most_common(20):
        print("    %7.1f us/s  %s" % (us(n), s))
    if a.keep:
        with open(os.path.join(work, "main.samples"), "w") as f:
            for t, sym, dso in window:
                f.write("%.6f %s (%s)\n" % (t, sym, dso))
    else:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Which functions of a shared object run while a command runs, from kernel uprobes (root + tracefs).

Used by startup_order.py for the paths callgrind cannot follow at a usable speed: the library inside a JVM
(JNI_OnLoad, the monitors' Java-facing start, their hot paths, the watchdog's checks). One uprobe per
function symbol of the library's text (only processes that map this very file hit them), recorded in a
tracing instance of its own (its own buffer, nothing global changed), removed afterwards.

A function whose first instruction has a lock prefix (an atomic in-flight count at entry) is never
reported: x86 will not probe such an instruction. startup_order.py gathers those few without a trace
(lock_prefixed_entries). Installing probes made that kernel print one WARN_ON_ONCE from
ext4 (ext4_check_map_extents_env, reading the library's page for the breakpoint): harmless, but noisy.

Which functions run once start is over: trace() can split each run at the library's own text release
(`split`, the function jankprobe_start, _configure and _stop call when they are done): a function
entered after it, or after a start began on another thread than the one starting (a thread that start
launches runs on across the release), is "after start"; except on a thread inside a start or configure
call (`control`, until its release), and between a stop's entry (`stop`) and its release.
startup_order.py lays those out apart from the start-only code, whose pages the release gives back.
It also counts, per quarter second, the entries after start on the app's threads (not the watchdog's),
to rank the per-wake functions it places first.

The calm set (`calm`): what runs after start outside every call the app makes into the library (start,
configure, stop, and the `quiet` ones: status and export, whose ends come from return probes), i.e. what
a running app keeps executing on its own (hooks, the watchdog's periodic checks). startup_order.py puts
it in the first 64 KiB window of text, the rare paths (reports, status, export) after it.

Usage: uprobe_trace.py LIBRARY -- COMMAND...   prints the mangled names that ran, in first-hit order.
"""
import os
import re
import subprocess
import sys

TRACEFS = "/sys/kernel/tracing"
# Symbols lib/startup_order.ld defines in the text (range marks, not functions).
LINKER_MARKS = ("jp_start_only_text_", "jp_rare_text_")
GROUP = "jp_order"


def text_symbols(so):
    """(name, file offset, address) of every defined function, from the symbol table and the program headers."""
    loads = []
    for line in subprocess.run(["readelf", "-lW", so], check=True, capture_output=True, text=True).stdout.splitlines():
        parts = line.split()
        if parts and parts[0] == "LOAD":
            loads.append((int(parts[2], 16), int(parts[1], 16), int(parts[4], 16)))  # vaddr, offset, filesz
    out, seen = [], set()
    for line in subprocess.run(["nm", "--defined-only", so], check=True, capture_output=True, text=True).stdout.splitlines():
        parts = line.split()
        if len(parts) != 3 or parts[1] not in "tTwW" or parts[2].startswith(LINKER_MARKS):
            continue
        addr = int(parts[0], 16)
        for vaddr, offset, size in loads:
            if vaddr <= addr < vaddr + size:
                off = addr - vaddr + offset
                if off not in seen:  # aliases (C1/C2): one probe, the first name
                    seen.add(off)
                    out.append((parts[2], off, addr))
                break
    return out


def write(path, text, mode="a"):
    with open(path, mode) as f:
        f.write(text)


def define(events, lines):
    # One definition per write(2): the kernel parses a write as whole lines and rejects a cut one.
    fd = os.open(events, os.O_WRONLY | os.O_APPEND)
    try:
        for line in lines:
            os.write(fd, (line + "\n").encode())
    finally:
        os.close(fd)


class Run:
    """One command's trace: `order`, the functions it ran in first-hit order; `after`, those entered after
    start was over (see the module's doc; empty without a split function); `splits`, how many releases.
    For the per-wake ("hot") group of startup_order.py: `app_calls`, per function, its entries after start
    on the app's threads (not ours, see OUR_THREADS) in each SLOT_S slot from the first release on;
    `app_order`, those functions in the order of their first entry after start; `app_slots`, the number
    of slots from the first release to the last event."""

    def __init__(self):
        self.order, self.after, self.splits = [], set(), 0
        self.calm, self.calm_order = set(), []  # after start, outside the app's calls into the library
        self.app_calls, self.app_order, self.app_slots = {}, [], 0

    def steady_rate(self, name):
        """Entries per second in a typical slot (the median one): a burst (a status export parsing JSON
        a thousand times in one slot) is not a steady rate, a function run on every wake is."""
        if self.app_slots == 0:
            return 0.0
        counts = sorted(self.app_calls.get(name, {}).get(i, 0) for i in range(self.app_slots))
        return counts[len(counts) // 2] / SLOT_S

    def peak_rate(self, name):
        return max(self.app_calls.get(name, {0: 0}).values()) / SLOT_S


# One trace line: "comm-TID [CPU] FLAGS TIMESTAMP: fN: (ADDRESS)" (an entry) or "...: rN: (ADDRESS <- ADDRESS)"
# (a return); the flags column depends on options. The comm may hold spaces and dashes: it is everything up
# to the last "-TID" before the CPU column.
EVENT = re.compile(r"^\s*(.*)-(\d+)\s+\[\d+\]\s+(?:\S+\s+)?(\d+\.\d+): ([fr])(\d+): \(", re.M)
# Threads of ours (hook/watchdog.cc names its thread "jp-watchdog"): their periodic work is not a wake of
# the app. An unknown comm ("<...>": the kernel's comm cache missed) counts as the app's.
OUR_THREADS = re.compile(r"^jp-")
SLOT_S = 0.25


def classify(text, symbols, split=None, control=(), stop=(), quiet=()):
    """`quiet`: entry points (names) of calls that are neither start nor stop but run on the app's request
    (status, export): the trace must have their return probes (rN events, N the symbol index) to know
    where each call ends. What a thread runs inside one is after start, but not calm."""
    run = Run()
    hit, in_control, running, stopped = set(), set(), False, False
    inside_quiet = {}  # tid -> depth of quiet calls on it
    first_release = last = None
    for m in EVENT.finditer(text):
        comm, tid, when, kind, i = m.group(1), int(m.group(2)), float(m.group(3)), m.group(4), int(m.group(5))
        name = symbols[i][0]
        last = when
        if kind == "r":
            if name in quiet and inside_quiet.get(tid, 0) > 0:
                inside_quiet[tid] -= 1
            continue
        if name in quiet:
            inside_quiet[tid] = inside_quiet.get(tid, 0) + 1
        if i not in hit:
            hit.add(i)
            run.order.append(name)
        if split is None:
            continue
        if name == split:
            run.splits += 1
            # The control call on this thread is done. Whatever runs from here on would fault the released
            # pages back, also after a stop's release (a thread's exit runs our thread_local destructors).
            in_control.discard(tid)
            running = True
            if first_release is None:
                first_release = when
        elif name in stop:
            running = False  # the teardown, on every thread, until its release
            stopped = True  # and what runs after a stop (thread exits) is not what a running app runs
            in_control.add(tid)
        elif name in control:
            # From a start on, every other thread of ours runs steady-state code, also before the release:
            # a thread started by start (the watchdog) sits in its loop across the release, and its loop
            # function, entered once, would fault its window back at the next iteration.
            in_control.add(tid)
            running = True
        if running and tid not in in_control:
            run.after.add(name)
            if name != split and not stopped and not inside_quiet.get(tid) and name not in run.calm:
                run.calm.add(name)
                run.calm_order.append(name)
            if first_release is not None and not OUR_THREADS.search(comm):
                if name not in run.app_calls:
                    run.app_calls[name] = {}
                    run.app_order.append(name)
                slot = int((when - first_release) / SLOT_S)
                run.app_calls[name][slot] = run.app_calls[name].get(slot, 0) + 1
    if first_release is not None:
        run.app_slots = int((last - first_release) / SLOT_S) + 1
    return run


def dropped_events(instance):
    """Events the instance's buffer had no room for (overwrite off: the newest are dropped)."""
    total = 0
    per_cpu = os.path.join(instance, "per_cpu")
    for cpu in os.listdir(per_cpu):
        with open(os.path.join(per_cpu, cpu, "stats")) as f:
            for line in f:
                if line.startswith("dropped events:"):
                    total += int(line.split(":")[1])
    return total


def trace(so, commands, env=None, split=None, control=(), stop=(), quiet=()):
    """Runs each command in turn; returns, per command, a Run. The probes are set up once for all of them
    (each enable/disable waits for an RCU grace period per probe); the `quiet` functions get a return
    probe too (rN, N their index)."""
    so = os.path.realpath(so)
    symbols = text_symbols(so)
    instance = os.path.join(TRACEFS, "instances", GROUP)
    events = os.path.join(TRACEFS, "uprobe_events")
    if os.path.isdir(instance):
        os.rmdir(instance)
    # Appended, never truncated: other uprobes on the system stay as they are.
    returns = [i for i, (name, _, _) in enumerate(symbols) if name in quiet]
    define(events, ["p:%s/f%d %s:0x%x" % (GROUP, i, so, off) for i, (_, off, _) in enumerate(symbols)] +
           ["r:%s/r%d %s:0x%x" % (GROUP, i, so, symbols[i][1]) for i in returns])
    results = []
    try:
        os.mkdir(instance)
        write(os.path.join(instance, "buffer_size_kb"), "32768", "w")
        # A full buffer keeps its oldest events (the first hits are what we want) and drops new ones.
        write(os.path.join(instance, "options", "overwrite"), "0", "w")
        write(os.path.join(instance, "events", GROUP, "enable"), "1", "w")
        for command in commands:
            write(os.path.join(instance, "trace"), "", "w")  # empty the buffer
            write(os.path.join(instance, "tracing_on"), "1", "w")
            rc = subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
            write(os.path.join(instance, "tracing_on"), "0", "w")
            if rc != 0:
                print("uprobe_trace: %s exited with %d" % (" ".join(command), rc), file=sys.stderr)
            dropped = dropped_events(instance)
            if dropped:
                # The newest are lost: steady-state functions first entered late would be missed.
                print("uprobe_trace: %s: %d events dropped (buffer full)" % (" ".join(command), dropped),
                      file=sys.stderr)
            with open(os.path.join(instance, "trace")) as f:
                text = f.read()
            results.append(classify(text, symbols, split, control, stop, quiet))
    finally:
        if os.path.isdir(instance):
            write(os.path.join(instance, "events", GROUP, "enable"), "0", "w")
            os.rmdir(instance)
        define(events, ["-:%s/f%d" % (GROUP, i) for i in range(len(symbols))] + ["-:%s/r%d" % (GROUP, i) for i in returns])
    return results


def lock_prefixed_entries(so):
    """Functions whose first instruction has a lock prefix: no uprobe at their entry (x86 refuses it)."""
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", so], capture_output=True, text=True).stdout
    names, current = set(), None
    for line in out.splitlines():
        m = re.match(r"^[0-9a-f]+ <(.+)>:$", line)
        if m:
            current = m.group(1)
            continue
        m = re.match(r"^\s+[0-9a-f]+:\s+(\S+)", line)
        if current and m:
            if m.group(1) == "lock":
                names.add(current)
            current = None
    return names


def main():
    if "--" not in sys.argv or sys.argv.index("--") != 2:
        print(__doc__)
        return 2
    for name in trace(sys.argv[1], [sys.argv[3:]])[0].order:
        print(name)
    return 0


if __name__ == "__main__":
    sys.exit(main())

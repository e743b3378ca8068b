#!/usr/bin/env python3
"""Writes lib/startup_order.ld: the functions of libjankprobe.so that run while the library is loaded and
started (and a monitor switched on and used), gathered in one output section at the start of the text.

Why: the kernel maps a file page fault's whole 64 KiB neighbourhood ("fault-around"), so the text an app
pays for at start-up is the number of 64 KiB blocks the start-up path touches, not its size. Spread over
the library's ~0.8 MB of text, ~100 small functions touched ~8 blocks; gathered, they fit in one or two.

How: runs `jankprobe-footprint --child SCENARIO` under valgrind's callgrind (no demangling) for each
scenario and keeps the functions executed inside libjankprobe.so. With -ffunction-sections every function
is in a section `.text.<mangled name>` (also the static C++ runtime's), so the linker script names sections.
A name that no longer exists is simply not matched: a stale list costs pages, never correctness.

On the JVM (the demo app of `./run demo`, benchmark runs of each monitor variant) the library runs more:
JNI_OnLoad, the Java facade's natives, each monitor's JNI start, the hot paths (poll source, idle timing,
frame ticker natives), the watchdog's periodic checks, status. callgrind cannot run a JVM at a usable
speed, so those phases come from kernel uprobes (uprobe_trace.py; needs root and tracefs) and follow the
host phases in the same output section; without root they are left out (with a note) and the host phases
alone are written.

Two sets, two output sections: what runs after start is over (.text.jp_steady: the hot paths, the
watchdog's checks, reports, export, status; from the JVM traces split at the text release that start and
configure end with, the host's "use" phase, the untraceable hot entries, and the release with its callers),
then, from the next 64 KiB boundary and ending on one, what only load, start, configure and stop run
(.text.jp_start_only, marked by jp_start_only_text_begin/end): hook/text_release.cc drops its pages after
start, each configure and stop, and fault-around from steady or rare code never maps them back.

The hot group, first in .text.jp_steady: what runs on every wake of the app's main thread (poll source)
and on every input event (proxies, tracker), ranked from the JVM traces by how often the app's threads
enter each function in a typical quarter second after start (HOT_CALLS_PER_S), laid out in the order of
first entry after start, the looper's (every wake runs them) before the others (an input event's wake adds
them). A looper wake then runs a few consecutive lines on one page, an input event's on two: in situ its first
instructions missed in the i-cache and iTLB (the code was spread over the steady set's 150 KB). The cold
parts (.text.unlikely.<name>) stay with their function's phase. Lock-prefixed entries cannot be counted.

Usage: startup_order.py BUILD_DIR [OUT] (BUILD_DIR has tools/jankprobe-footprint, tools/jankprobe-demo and
lib/libjankprobe.so)."""
import os
import re
import subprocess
import sys
import tempfile

# The phases, in the order the sections are laid out: each phase's new functions sit together, so that a
# device that only loads the library (sampled out) touches the first block only, and so on.
# libgcc helpers the start-up path calls, by the archive member that holds them.
LIBGCC_OBJECTS = {"__popcountdi2": "_popcountsi2.o", "__udivti3": "_udivdi3.o"}

# "end" runs the scenario to its end: jankprobe_stop, then process exit.
PHASES = [("none", "dlopen"), ("none", "start"), ("input", "on"), ("input", "use"), ("input", "end")]

# The text release (hook/text_release.cc) splits each JVM trace: what is entered after it ran after start.
RELEASE = "_ZN2jp4hook20ReleaseStartOnlyTextEv"
# Entering these starts a control call on that thread (start-only code until its release), or a stop.
CONTROL = re.compile(r"^jankprobe_(start|configure)$|^_ZN2jp3jni12_GLOBAL__N_1(11NativeStart|15NativeConfigure)E")
STOP = re.compile(r"^jankprobe_stop$|^_ZN2jp3jni12_GLOBAL__N_110NativeStopE")
# On the stack while the release runs.
RELEASE_CALLERS = re.compile(CONTROL.pattern + "|" + STOP.pattern)
# The app's other calls into the library (status, export): what runs inside them is not calm (below). If
# such an entry releases the start-only text itself when done (a call to RELEASE in its C function), it
# is a control call like start: its own code then goes with the start-only range.
QUIET = {"status": re.compile(r"^jankprobe_status$|^_ZN2jp3jni12_GLOBAL__N_112NativeStatusE"),
         "export": re.compile(r"^jankprobe_export$|^_ZN2jp3jni12_GLOBAL__N_112NativeExportE")}

# A lag in progress, on the watchdog thread: the main thread's stack capture and the sampling deadlines'
# callbacks (a gap of the poll source, or a message of the printer source, past looper.sample_after_ms).
# Rare by design (hook/text_release.h: the watchdog's sweep gives their pages back), also where a slow host,
# or the tracing's own cost, has every run lag once after start (the first gap on a KVM guest where every
# wake is cold: 24 functions, 2 KiB, of the sampling path passed for calm and the calm set spilled out of
# the first window). Traced like status and export (return probes): what runs inside them is not calm.
LAGGING = re.compile(r"^_ZN2jp4hook8Watchdog22CaptureMainThreadStackEv$"
                     r"|^_ZN2jp6looper8internal12_GLOBAL__N_112OnPollSampleERKNS_4hook13DeadlineFiredEPv$"
                     r"|^_ZN2jp6looper12_GLOBAL__N_18OnSampleERKNS_4hook13DeadlineFiredEPv$")

# Symbols lib/startup_order.ld defines in the text (range marks, not functions).
LINKER_MARKS = ("jp_start_only_text_", "jp_rare_text_")

# The demo app's benchmark variants traced on the JVM, in this order (each adds what it runs new).
JVM_VARIANTS = ["none", "input", "idle", "barrier", "looper", "all"]

# The hot group, first in .text.jp_steady: the functions the app's threads enter at least this often per
# second after start in some benchmark variant (the poll source's proxies and slow paths run on every
# wake of the main thread, hundreds a second; the input proxies and the tracker's entries on every event;
# a re-anchor of the clock 20 times a second while busy), ranked from the traces' own counts so that the
# group follows the code. The watchdog's ticks (our thread) and the scripted faults are not counted.
HOT_CALLS_PER_S = 10
# The hot functions that run on every wake of the main thread (the looper monitor's: jp::looper::), first.
WAKE_FIRST = "_ZN2jp6looper"

# The calm set: every function the benchmark variants run after start outside the app's calls into the
# library (start, configure, stop, status, export), on any thread: the hooks, the poll source, the idle
# natives, the watchdog's periodic checks and drains. That is what a running app that lags nowhere keeps
# executing, and it goes right after the hot group, so that it shares the first 64 KiB window with .init
# and .plt: a running app then keeps one window of our text resident. The rare paths (lag reports,
# stacks, status, export, barrier removal) follow in the windows after it.
TEXT_WINDOW = 0x10000
# Each benchmark variant is traced this many times; a function is calm if every run ran it after start. A
# lag in one run (the host's load delaying a message: the stack sampling, a report) is left to the rare
# part. Regenerate on a quiet host all the same: lags in every run would make their paths calm.
CALM_RUNS = 2


def executed_functions(footprint, so, scenario, touches, until):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "cg.out")
        env = dict(os.environ, JP_FOOTPRINT_UNTIL=until)
        subprocess.run(["valgrind", "--tool=callgrind", "--demangle=no", "--callgrind-out-file=" + out,
                        footprint, "--child", scenario, so, str(touches)],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        # Every executed function's name; callgrind sometimes files a shared object's functions under an
        # unknown object ("???"), so membership in the library is decided by its symbol table instead.
        names = set()
        for line in open(out, encoding="utf-8", errors="replace"):
            m = re.match(r"^c?fn=\(\d+\) (.*)$", line.rstrip("\n"))
            if m:
                names.add(m.group(1))
        return names & library_functions(so)


def calls(so, name, target):
    """Whether function `name` of `so` calls or tail-calls `target` directly (objdump)."""
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", "--disassemble=" + name, so],
                         capture_output=True, text=True).stdout
    return re.search(r"\b(call|jmp)\w*\s+[0-9a-f]+ <%s>" % re.escape(target), out) is not None


def function_sizes(so):
    """Bytes of each function body (by name), from the symbol table: to check that the calm set fits."""
    out = subprocess.run(["nm", "-S", "--defined-only", so], check=True, capture_output=True, text=True).stdout
    return {p[3]: int(p[1], 16) for p in (line.split() for line in out.splitlines()) if len(p) == 4 and p[2] in "tTwW"}


def library_functions(so):
    out = subprocess.run(["nm", "--defined-only", so], check=True, capture_output=True, text=True).stdout
    return {parts[2] for parts in (line.split() for line in out.splitlines())
            if len(parts) == 3 and parts[1] in "tTwW" and not parts[2].startswith(LINKER_MARKS)}



def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    build = sys.argv[1]
    here = os.path.dirname(os.path.abspath(__file__))
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(here, "..", "..", "lib", "startup_order.ld")
    footprint = os.path.join(build, "tools", "jankprobe-footprint")
    so = os.path.join(build, "lib", "libjankprobe.so")
    # What each phase runs, in the order the phases are laid out. An app that loads and starts us with every
    # monitor off runs the host's load and start phases and the JVM's "none" (JNI_OnLoad, the facade's
    # natives, status): those come first, so such an app touches the fewest blocks; the monitors follow.
    ran = {}
    for scenario, until in PHASES:
        ran["%s: %s" % (scenario, until)] = executed_functions(footprint, so, scenario, 200, until)
    order = ["none: dlopen", "none: start"]
    # Functions that run after start is over: the host's "use" phase (the input proxies under touches)...
    after = ran["input: use"] - ran["input: on"]
    demo = os.path.join(build, "tools", "jankprobe-demo")
    release_callers = set()  # status/export entries that release like start (see QUIET)
    hot = []  # the per-wake group, in execution order (JVM traces only)
    calm = []  # what a running app keeps executing (JVM traces only), in order of first entry
    if os.geteuid() == 0 and os.path.isdir("/sys/kernel/tracing") and os.path.exists(demo):
        import uprobe_trace
        # The benchmark variants as demo_bench runs them, then the scripted faults of `./run demo`: the
        # paths a lagging app runs now and then (stack samples, pending-queue reads, reports, barrier
        # removal, export), which a calm benchmark run reaches only sometimes.
        out_dir = tempfile.mkdtemp(prefix="jp_order_demo")
        # Each variant twice: the calm set is what both runs of a variant ran (see CALM_RUNS).
        commands = [[demo, "--bench", "4", "--warmup", "1", "--jankprobe", "on", "--config", "bench-%s.json" % v]
                    for v in JVM_VARIANTS for _ in range(CALM_RUNS)]
        control = {n for n in library_functions(so) if CONTROL.search(n)}
        stop = {n for n in library_functions(so) if STOP.search(n)}
        quiet = set()
        for what, pattern in QUIET.items():
            names = {n for n in library_functions(so) if pattern.search(n)}
            if any(calls(so, n, RELEASE) for n in names if not n.startswith("_Z")):
                control |= names
                release_callers |= names
                print("%s releases the start-only text: a control call, its code start-only" % what, file=sys.stderr)
            else:
                quiet |= names
        lagging = {n for n in library_functions(so) if LAGGING.search(n)}
        if not lagging:
            print("no sampling callbacks found (LAGGING): a lag during the traces counts as calm", file=sys.stderr)
        quiet |= lagging
        hot_runs, calm_runs = [], []
        # Return probes on every call the app makes into the library: what runs inside one, also after its
        # release (the rest of a status, a native's return path), is not calm.
        runs = uprobe_trace.trace(so, commands + [[demo, "--out", out_dir]], split=RELEASE, control=control,
                                  stop=stop, quiet=quiet | control | stop)
        for i, variant in enumerate(JVM_VARIANTS):
            # What every run of the variant ran calm, in the first run's order: a lag the host's load caused
            # in one run (a stack sample, a report) is not what a running app keeps executing.
            both = set.intersection(*(runs[i * CALM_RUNS + k].calm for k in range(CALM_RUNS)))
            calm_runs.insert(0, [f for f in runs[i * CALM_RUNS].calm_order if f in both])
            for k in range(1, CALM_RUNS):
                after |= runs[i * CALM_RUNS + k].after
                runs[i * CALM_RUNS].order += [f for f in runs[i * CALM_RUNS + k].order
                                              if f not in runs[i * CALM_RUNS].order]
        runs = [runs[i * CALM_RUNS] for i in range(len(JVM_VARIANTS))] + runs[len(JVM_VARIANTS) * CALM_RUNS:]
        for variant, run in zip(JVM_VARIANTS + ["faults"], runs):
            ran["JVM demo, %s" % variant] = set(run.order)
            if variant in JVM_VARIANTS:
                # In the order of first entry after start: a wake runs its functions in that order, so its
                # code is a few consecutive lines; the busiest variant ("all", last) decides the order.
                hot_runs.insert(0, (variant, run))
            if run.splits == 0:
                print("JVM demo, %s: the release (%s) never ran: nothing counts as after start" % (variant, RELEASE),
                      file=sys.stderr)
            after |= run.after
        order += ["JVM demo, none"] + ["%s: %s" % p for p in PHASES[2:]]
        # x86 uprobes refuse a probe on an instruction with a lock prefix: a function that starts with one
        # (an atomic in-flight count: the idle and frame natives' entries) is invisible to the traces.
        # There are a handful, hot ones among them: gathered after the monitors, before the rare paths.
        ran["not traceable (lock-prefixed entry)"] = uprobe_trace.lock_prefixed_entries(so)
        if RELEASE in ran["not traceable (lock-prefixed entry)"]:
            raise SystemExit("%s starts with a lock prefix: no uprobe, no split" % RELEASE)
        after |= ran["not traceable (lock-prefixed entry)"]  # the idle and frame natives' entries: hot
        order += ["JVM demo, %s" % v for v in JVM_VARIANTS[1:]] + ["not traceable (lock-prefixed entry)"]
        order.append("JVM demo, faults")
        for calm_order in calm_runs:  # "all" first: its order of first entry
            calm += [f for f in calm_order if f not in calm]
        # The host's "use" phase: the input monitor on the libinput fixture, its proxies and the watchdog's
        # checks, without a JVM (tests/lib/text_release_library_test.cc runs that).
        calm += sorted(ran["input: use"] - ran["input: on"] - set(calm))
        # The lock-prefixed entries are invisible to the traces and a few bytes each (the watchdog's fence,
        # the tracker's callback entry, the poll source's depth guard): all of them join the calm set.
        calm += sorted(ran["not traceable (lock-prefixed entry)"] - set(calm))
        for variant, run in hot_runs:
            for f in run.app_order:
                if f not in hot and run.steady_rate(f) >= HOT_CALLS_PER_S:
                    hot.append(f)
        # Every wake of the main thread runs the looper's (the poll source's proxies and gap edges); only
        # an input event's wake runs input's too. The looper's first, then, each part in order of first
        # entry: the looper's wake path then lies on the first text page with .plt (census11: in order of
        # first entry, input's came first and a looper-only wake ran on two pages, each a page walk on a
        # host where every wake comes back cold).
        hot = [f for f in hot if f.startswith(WAKE_FIRST)] + [f for f in hot if not f.startswith(WAKE_FIRST)]
        # What the ranking saw (hot or a near miss), for the record of a regeneration.
        for f in sorted({f for _, run in hot_runs for f in run.app_order},
                        key=lambda f: -max(run.steady_rate(f) for _, run in hot_runs)):
            steady_rate = max(run.steady_rate(f) for _, run in hot_runs)
            if steady_rate >= 1 or f in hot:
                print("%s %7.1f/s typical, %7.1f/s peak  %s" % ("hot " if f in hot else "    ", steady_rate,
                      max(run.peak_rate(f) for _, run in hot_runs), f), file=sys.stderr)
    else:
        print("JVM phases left out: need root, /sys/kernel/tracing and %s" % demo, file=sys.stderr)
        order += ["%s: %s" % p for p in PHASES[2:]]
    # Identical code folding leaves one body under several names (template instances with the same code):
    # the trace reports one of them, callgrind another (also C1/C2, D1/D2 aliases), the section is named after a
    # third. Name every alias at that address, and compare functions by address (body), not by name.
    by_addr, addr_of = {}, {}
    for line in subprocess.run(["nm", "--defined-only", so], check=True, capture_output=True, text=True).stdout.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "tTwW" and not parts[2].startswith(LINKER_MARKS):
            by_addr.setdefault(parts[0], []).append(parts[2])
            addr_of[parts[2]] = parts[0]

    def body(name):
        return addr_of.get(name, name)

    # ...and the release with the callers on the stack while it runs: they continue after the madvise, so
    # in the start-only range they would fault a window straight back (hook/text_release.cc).
    on_stack = {n for n in library_functions(so) if n == RELEASE or RELEASE_CALLERS.search(n)} | release_callers
    after = {body(f) for f in after | on_stack}
    # The calm set after the hot group and the release (which runs at every start, configure and stop):
    # placed first, it is not repeated in the phases below (only its cold parts are, in the rare part).
    placed = {body(f) for f in hot} | {body(f) for f in on_stack}
    calm_bodies, calm_names = set(), []
    for f in calm:
        if body(f) not in placed and body(f) not in calm_bodies:
            calm_bodies.add(body(f))
            calm_names.append(f)
    seen, steady, start_only = set(), [("the release and its callers", sorted(on_stack))], []
    seen |= {body(f) for f in on_stack} | calm_bodies | placed
    for phase in order:
        # Static initialisers already sit together in .text.startup; clones (.constprop/.isra/.part) have
        # sections of their own, named like the clone symbol.
        new, bodies = [], set()
        for f in sorted(ran[phase]):
            if body(f) not in seen and body(f) not in bodies and not f.startswith("_GLOBAL__sub_I"):
                new.append(f)
                bodies.add(body(f))
        steady.append((phase, [f for f in new if body(f) in after]))
        start_only.append((phase, [f for f in new if body(f) not in after]))
        seen |= {body(f) for f in ran[phase]}
    functions = [f for _, names in steady + start_only for f in names]
    steady_count = sum(len(names) for _, names in steady)

    def patterns_with_aliases(name):
        out = []
        for alias in sorted(set(by_addr.get(addr_of.get(name), [name])) | {name}):
            out += patterns(alias)
        return out

    def patterns(name):
        # A constructor or destructor runs under one of its aliased names (complete/base object: C1/C2,
        # D1/D2), but its section is named after the base one: name every variant.
        variants = {name}
        for a, b in (("C1E", "C2E"), ("C1I", "C2I"), ("D1E", "D2E")):  # C1I: a constructor template
            if a in name or b in name:
                variants |= {name.replace(a, b), name.replace(b, a)}
        # __attribute__((hot)) puts a function in .text.hot.<name>, __attribute__((cold)) in
        # .text.unlikely.<name> (the input monitor marks its hot path and rare branches so); the cold part
        # of a split function sits in .text.unlikely.<name> too (gathered with it: a few KB).
        out = ["*(%s)" % " ".join(".text.%s .text.%s.* .text.hot.%s .text.unlikely.%s" % (v, v, v, v)
                                  for v in sorted(variants))]
        if ".cold" in name:  # the cold part of a split function sits in .text.unlikely.<function>
            out.append("*(.text.unlikely.%s)" % name.split(".cold")[0])
        if name in LIBGCC_OBJECTS:  # libgcc is not built with -ffunction-sections: name its object
            out.append("*libgcc.a:%s(.text)" % LIBGCC_OBJECTS[name])
        return out
    def aliases(name):
        out = set()
        for alias in set(by_addr.get(addr_of.get(name), [name])) | {name}:
            alias = alias.split(".cold")[0]
            out.add(alias)
            for a, b in (("C1E", "C2E"), ("C1I", "C2I"), ("D1E", "D2E")):
                if a in alias or b in alias:
                    out |= {alias.replace(a, b), alias.replace(b, a)}
        return sorted(out)

    def hot_patterns(name):
        # Only the function's own (or .text.hot.) section: its cold part (.text.unlikely.<name>, the .cold
        # split of rare branches) stays with the function's phase below, out of the wake's lines. The
        # linker places a section at its first match, so the phase's patterns later place only that part.
        out = []
        for alias in sorted(set(by_addr.get(addr_of.get(name), [name])) | {name}):
            variants = {alias}
            for a, b in (("C1E", "C2E"), ("C1I", "C2I"), ("D1E", "D2E")):
                if a in alias or b in alias:
                    variants |= {alias.replace(a, b), alias.replace(b, a)}
            # .text.<name>.*: a clone of it (.part.N, .constprop.N, .isra.N) the compiler may make in another build.
            out.append("*(%s)" % " ".join(".text.%s .text.%s.* .text.hot.%s" % (v, v, v) for v in sorted(variants)))
        if name in LIBGCC_OBJECTS:  # libgcc is not built with -ffunction-sections: name its object
            out.append("*libgcc.a:%s(.text)" % LIBGCC_OBJECTS[name])
        return out

    def write_phases(f, phases):
        for phase, names in phases:
            f.write("    /* %s: %d functions */\n" % (phase, len(names)))
            for name in names:
                for line in patterns_with_aliases(name):
                    f.write("    %s\n" % line)

    with open(out, "w") as f:
        f.write("/* Generated by tools/footprint/startup_order.py from callgrind runs of jankprobe-footprint and\n"
                "   uprobe traces of the demo app on the JVM: the %d functions of libjankprobe.so that run at load,\n"
                "   at start, when a monitor is switched on and while it is used, ahead of .text, so that a running\n"
                "   app keeps one 64 KiB fault-around window of our text resident. Three sections:\n"
                "   .text.jp_steady, right after .init and .plt in that first window: the hot group (what the app's\n"
                "   threads run on every wake or input event, in order of execution), the text release and its\n"
                "   callers, and the calm set, the %d functions a running app that lags nowhere keeps executing\n"
                "   (hooks, the watchdog's periodic checks); .text.jp_rare, the %d others that run after start\n"
                "   (reports, stacks, status, export); then, on 64 KiB windows of their own, .text.jp_start_only,\n"
                "   the %d that only load, start, configure and stop run. hook/text_release.cc gives the pages of\n"
                "   .text.jp_rare and .text.jp_start_only back after start, each configure and stop\n"
                "   (jp_rare_text_begin up to jp_start_only_text_end). Regenerate after changes to these paths\n"
                "   (`cmake --build <Release build> --target jankprobe-startup-order`, as root, on a quiet host):\n"
                "   a function missing here lands in plain .text, and if a running app calls it, costs a window.\n"
                "   Names that no longer exist are ignored by the linker. */\n"
                % (len(functions) + len(hot) + len(calm_names), len(hot) + len(calm_names),
                   steady_count - len(on_stack), len(functions) - steady_count))
        f.write("SECTIONS\n{\n  .text.jp_steady :\n  {\n")
        f.write("    /* hot: entered >= %d times a second after start on the app's threads, the looper's then the"
                " others, each in order of first entry: %d functions */\n" % (HOT_CALLS_PER_S, len(hot)))
        for name in hot:
            for line in hot_patterns(name):
                f.write("    %s\n" % line)
        f.write("    *libjp_hook.a:text_release.cc.o(.text .text.*)\n")
        write_phases(f, steady[:1])  # the release's callers
        f.write("    /* calm: run after start outside the app's calls into the library, in the benchmark variants:"
                " %d functions */\n" % len(calm_names))
        for name in calm_names:
            if ".cold" not in name:
                for line in hot_patterns(name):
                    f.write("    %s\n" % line)
        # The cold parts (.text.unlikely.<name>: GCC's .cold splits, and whole functions marked cold) of
        # the hot and calm functions: some run in steady state (a rare branch taken now and then, a cold
        # function entered on every event), so they stay in the first window, after the code that runs most.
        f.write("    /* cold parts of the hot and calm functions */\n")
        for name in hot + calm_names:
            f.write("    *(%s)\n" % " ".join(".text.unlikely.%s" % a for a in aliases(name)))
        # The rare part: what else runs after start (reports, stacks, status, export, the faults' paths),
        # and what start also runs: hook/text_release.cc gives it back with the start-only range.
        f.write("  }\n  .text.jp_rare :\n  {\n")
        f.write("    PROVIDE_HIDDEN(jp_rare_text_begin = .);\n")
        write_phases(f, steady[1:])
        f.write("  }\n  .text.jp_start_only ALIGN(0x10000) :\n  {\n")
        f.write("    PROVIDE_HIDDEN(jp_start_only_text_begin = .);\n")
        # First what runs at load: the static initialisers (which the default script keeps together in
        # .text.startup) and crtbegin's frame_dummy, which would otherwise open the next block.
        f.write("    /* load: static initialisers and crtbegin */\n")
        f.write("    *(.text.startup .text.startup.*)\n    *crtbegin*.o(.text .text.*)\n")
        write_phases(f, start_only)
        # The rest of .text (rare paths) starts on a window of its own too.
        f.write("    . = ALIGN(0x10000);\n    PROVIDE_HIDDEN(jp_start_only_text_end = .);\n")
        f.write("  }\n}\nINSERT BEFORE .text;\n")
    # Does the calm set fit in the first window with .init and .plt? Sizes of this build's bodies (the
    # linked sizes of the next build differ by what changed since).
    sizes = function_sizes(so)
    first_window = set(hot) | on_stack | set(calm_names)
    first_window |= {n + ".cold" for n in first_window}
    first = sum(sizes.get(n, 0) for n in first_window) + \
        sum(sizes.get(n, 0) for n in sizes if "ReleaseFileText" in n or "FindLoadSegment" in n)
    print("%s: %d functions: %d hot, %d calm, %d rare or releasing, %d start-only; hot + release + calm ~%d bytes"
          " of a %d-byte window%s"
          % (out, len(functions) + len(hot) + len(calm_names), len(hot), len(calm_names), steady_count,
             len(functions) - steady_count, first, TEXT_WINDOW,
             "" if first < TEXT_WINDOW * 15 // 16 else " (TOO BIG: the calm set spills into a second window)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Which pages of libjankprobe.so's text (and of its first segment: headers, dynamic symbols, .rodata) are resident in the demo app while it runs (steady state, before
anything is stopped): the JP_DEMO_SMAPS copies are taken at the end, and a start-only window that a
thread brings back while the app runs would not show there once stop released it again.

Reads /proc/<pid>/maps and /proc/<pid>/pagemap (root: another process's pagemap) T seconds into a
`BUILD/tools/jankprobe-demo --bench 6 --warmup 1` run of tools/demo/config/bench-VARIANT.json.

    midrun_text.py BUILD_DIR VARIANT T [NAME=VALUE...]   (environment for the app, e.g. JANKPROBE_TEXT_RELEASE=off)
"""
import os
import struct
import subprocess
import sys
import time


def resident_runs(pid):
    out = []
    with open('/proc/%d/maps' % pid) as f:
        maps = [line.split() for line in f]
    with open('/proc/%d/pagemap' % pid, 'rb') as pm:
        for m in maps:
            # The text, and the first segment (headers, dynamic symbols, .rodata: r--p at offset 0).
            if len(m) < 6 or 'libjankprobe' not in m[5] or not (m[1] == 'r-xp' or (m[1] == 'r--p' and int(m[2], 16) == 0)):
                continue
            start, end = (int(x, 16) for x in m[0].split('-'))
            offset, pages = int(m[2], 16), (end - start) // 4096
            pm.seek(start // 4096 * 8)
            entries = struct.unpack('<%dQ' % pages, pm.read(pages * 8))
            runs, first = [], None
            for i, e in enumerate(entries + (0,)):
                if e >> 63 and first is None:
                    first = i
                elif not e >> 63 and first is not None:
                    runs.append('%x-%x' % (offset + first * 4096, offset + i * 4096))
                    first = None
            out.append('%s %d KiB resident: %s' % (m[1] if m[1] == 'r-xp' else 'headers r--p', sum(e >> 63 for e in entries) * 4,
                                                   ' '.join(runs)))
    return out


def main():
    if len(sys.argv) < 4:
        print(__doc__)
        return 2
    build, variant, at = sys.argv[1], sys.argv[2], float(sys.argv[3])
    env = dict(os.environ)
    for kv in sys.argv[4:]:
        k, v = kv.split('=', 1)
        env[k] = v
    app = subprocess.Popen([os.path.join(build, 'tools', 'jankprobe-demo'), '--bench', '6', '--warmup', '1',
                            '--jankprobe', 'on', '--config', 'bench-%s.json' % variant],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    time.sleep(at)
    runs = resident_runs(app.pid)
    app.wait()
    print(build, variant, *runs)
    return 0


if __name__ == '__main__':
    sys.exit(main())

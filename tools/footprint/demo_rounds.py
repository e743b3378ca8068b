#!/usr/bin/env python3
"""Where the demo app's extra resident memory is, per mapping, over several rounds and side by side.

    demo_rounds.py [--rounds N] [--out DIR] BUILD_DIR[,BUILD_DIR2...] [VARIANT...]

Per round, per build (interleaved, so that the host's drift hits every build alike), runs
`BUILD_DIR/tools/jankprobe-demo --bench 4 --warmup 1` for each variant (off = jankprobe never loaded, the
others with tools/demo/config/bench-<variant>.json; default: off none all), with JP_DEMO_SMAPS set. Prints
per build and variant the VmRSS growth minus the same round's off run (what demo_bench reports), and the
mean growth per kind of mapping (smaps_diff.py's kinds; libjankprobe.so split into its mappings by
permission and file offset), so that a change can be told from the JVM's run-to-run noise (+-100 KB on a
busy host) by the mappings it should move. The launcher's `.pages` side files (which pages of our mappings
were resident) stay in --out.
"""
import argparse
import collections
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import smaps_diff  # noqa: E402

CONFIG_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'demo', 'config')


def kind(m, offset):
    if 'libjankprobe' in m['path']:
        return 'libjankprobe.so %s @%x' % (m['perms'], offset)
    return smaps_diff.kind(m)


def offsets(path):
    """File offset of each mapping in a smaps copy, by start address (smaps_diff.read keeps no offset)."""
    out = {}
    with open(path) as f:
        for line in f:
            m = smaps_diff.HEADER.match(line)
            if m:
                out[int(m.group(1), 16)] = int(line.split()[2], 16)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('builds')
    ap.add_argument('variants', nargs='*', default=['off', 'none', 'all'])
    ap.add_argument('--rounds', type=int, default=3)
    ap.add_argument('--out', default='/tmp/jp_demo_rounds')
    a = ap.parse_args()
    builds = [os.path.abspath(b) for b in a.builds.split(',')]
    variants = a.variants if 'off' in a.variants else ['off'] + a.variants
    os.makedirs(a.out, exist_ok=True)
    rss = collections.defaultdict(list)  # (build, variant) -> [(rss, anon, file) growth per round]
    per_kind = collections.defaultdict(lambda: collections.defaultdict(list))
    for r in range(a.rounds):
        for b, build in enumerate(builds):
            for v in variants:
                prefix = os.path.join(a.out, '%d.%s.%d' % (b, v, r))
                cmd = [os.path.join(build, 'tools', 'jankprobe-demo'), '--bench', '4', '--warmup', '1']
                cmd += ['--jankprobe', 'off'] if v == 'off' else ['--jankprobe', 'on', '--config',
                                                                  'bench-%s.json' % v]
                p = subprocess.run(cmd, cwd=CONFIG_DIR, env=dict(os.environ, JP_DEMO_SMAPS=prefix),
                                   capture_output=True, text=True)
                lines = [x for x in p.stdout.splitlines() if x.startswith('{')]
                if p.returncode or not lines:
                    print('%s %s: failed (%d): %s' % (build, v, p.returncode, p.stderr[-300:]), file=sys.stderr)
                    continue
                j = json.loads(lines[-1])
                rss[(b, v)].append(tuple(j['%s_kb_after_app' % k] - j['%s_kb_before_app' % k]
                                         for k in ('rss', 'anon', 'file')))
                offs = offsets(prefix + '.after')
                sums = collections.Counter()
                for d, _, m, _ in smaps_diff.growth(smaps_diff.read(prefix + '.before'),
                                                    smaps_diff.read(prefix + '.after')):
                    sums[kind(m, offs.get(m['start'], 0))] += d
                for k in set(sums) | set(per_kind[(b, v)]):
                    per_kind[(b, v)][k].append(sums.get(k, 0))
    columns = [(b, v) for b in range(len(builds)) for v in variants]
    print('extra VmRSS over the same round\'s off run, KB: mean [per round] (anon / file)')
    for b, v in columns:
        off = rss.get((b, 'off'), [])
        if v == 'off' or not rss[(b, v)] or len(off) != len(rss[(b, v)]):
            continue
        d = [[x[i] - y[i] for x, y in zip(rss[(b, v)], off)] for i in range(3)]
        print('  build %d %-8s %+6.0f %s (%+.0f / %+.0f)' % (b, v, statistics.mean(d[0]), d[0],
                                                           statistics.mean(d[1]), statistics.mean(d[2])))
    kinds = sorted({k for c in columns for k in per_kind[c]},
                   key=lambda k: -max(abs(statistics.mean(per_kind[c][k]) if per_kind[c][k] else 0)
                                      for c in columns))
    print('\nmean Rss growth per kind of mapping, KiB')
    print('%-50s' % '' + ''.join('%10s' % ('%d:%s' % c) for c in columns))
    for k in kinds[:24]:
        means = [statistics.mean(per_kind[c][k]) if per_kind[c][k] else 0 for c in columns]
        if any(means):
            print('%-50s' % k[-50:] + ''.join('%+10.0f' % m for m in means))
    return 0


if __name__ == '__main__':
    sys.exit(main())

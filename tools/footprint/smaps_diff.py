#!/usr/bin/env python3
"""Where a process's resident memory grew, per mapping: smaps_diff.py BEFORE AFTER [--top N].

BEFORE and AFTER are copies of /proc/<pid>/smaps of the same process (jankprobe-demo writes them with
JP_DEMO_SMAPS=<prefix>). Mappings are matched by start address (a mapping that grew in place keeps it);
file mappings are summed per file, anonymous ones are listed one by one with their size, which tells a
thread stack (8 MiB + guard), a Java thread stack (~1 MiB), the Java heap, the malloc heap and arenas apart.
With --compare OTHER_BEFORE OTHER_AFTER the per-file and per-kind growth of two processes (two variants)
is shown side by side, so that the difference between variants can be attributed.
"""
import argparse
import collections
import re

HEADER = re.compile(r'^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \d+\s*(.*)$')


def read(path):
    maps = {}
    cur = None
    with open(path) as f:
        for line in f:
            m = HEADER.match(line)
            if m:
                start, end = int(m.group(1), 16), int(m.group(2), 16)
                cur = {'start': start, 'size_kb': (end - start) // 1024, 'perms': m.group(3),
                       'path': m.group(4).strip(), 'Rss': 0, 'Anonymous': 0}
                maps[start] = cur
                continue
            key, _, rest = line.partition(':')
            if cur is not None and key in ('Rss', 'Anonymous'):
                cur[key] = int(rest.split()[0])
    return maps


def kind(m):
    """A name for an anonymous mapping from its size and permissions (file mappings: their path)."""
    if m['path'] and not m['path'].startswith('['):
        return m['path']
    if m['path']:
        return m['path']  # [heap], [stack], [vvar]...
    size = m['size_kb']
    if m['perms'].startswith('---'):
        return 'anon: guard/reserved'
    if 8188 <= size <= 8200:
        return 'anon: native thread stack (8 MiB)'
    if 1000 <= size <= 1100:
        return 'anon: ~1 MiB (Java thread stack)'
    if 'x' in m['perms']:
        return 'anon: executable (JIT code cache)'
    # Below 4 MiB: malloc arenas' heaps (their rw part grows in place), metaspace chunks, small mmaps; their
    # sizes differ from process to process, so they are one bucket (the single-mapping list has them apart).
    return 'anon rw < 4 MiB (malloc arenas, metaspace, mmaps)' if size < 4096 else 'anon rw %d KiB' % size


def growth(before, after):
    """Per mapping of AFTER: Rss growth over the same start address in BEFORE (new mappings: all of it)."""
    out = []
    for start, m in after.items():
        b = before.get(start)
        d = m['Rss'] - (b['Rss'] if b else 0)
        da = m['Anonymous'] - (b['Anonymous'] if b else 0)
        out.append((d, da, m, b is None))
    for start, b in before.items():
        if start not in after:
            out.append((-b['Rss'], -b['Anonymous'], b, False))
    return out


def by_kind(g):
    sums = collections.defaultdict(lambda: [0, 0])
    for d, da, m, _ in g:
        k = kind(m)
        sums[k][0] += d
        sums[k][1] += da
    return sums


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('before')
    ap.add_argument('after')
    ap.add_argument('--compare', nargs=2, metavar=('BEFORE2', 'AFTER2'))
    ap.add_argument('--top', type=int, default=25)
    a = ap.parse_args()
    g = growth(read(a.before), read(a.after))
    total = sum(x[0] for x in g)
    if not a.compare:
        print('total Rss growth %+d KiB (anonymous %+d)' % (total, sum(x[1] for x in g)))
        print('%8s %8s  %s' % ('KiB', 'anon', 'what'))
        for k, (d, da) in sorted(by_kind(g).items(), key=lambda kv: -abs(kv[1][0]))[:a.top]:
            if d or da:
                print('%+8d %+8d  %s' % (d, da, k))
        print('\nlargest single mappings:')
        for d, da, m, new in sorted(g, key=lambda x: -abs(x[0]))[:a.top]:
            if d:
                print('%+8d %+8d  %x %s %6d KiB %s%s' % (d, da, m['start'], m['perms'], m['size_kb'],
                                                      m['path'] or '(anon)', ' NEW' if new else ''))
        return
    g2 = growth(read(a.compare[0]), read(a.compare[1]))
    k1, k2 = by_kind(g), by_kind(g2)
    print('%10s %10s %10s  %s' % ('first', 'second', '2nd-1st', 'what (Rss growth, KiB)'))
    rows = sorted(set(k1) | set(k2), key=lambda k: -abs(k2.get(k, [0])[0] - k1.get(k, [0])[0]))
    for k in rows[:a.top]:
        x, y = k1.get(k, [0, 0])[0], k2.get(k, [0, 0])[0]
        if x or y:
            print('%+10d %+10d %+10d  %s' % (x, y, y - x, k))
    print('%+10d %+10d %+10d  total' % (total, sum(x[0] for x in g2), sum(x[0] for x in g2) - total))


if __name__ == '__main__':
    main()

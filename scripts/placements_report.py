#!/usr/bin/env python3
"""How the tuner's pick depends on the placements of its final round.

Reads `i8gemm inspect race` text of tunes run with --final-placements N > 1 (every finalist's
reason lists its median at each placement, in the order timed). For each bucket of the first
file it names the pick by the first placement alone (what --final-placements 1 picks) and by the
median placement (what the tuner picks), and the first pick's cost by the median. With a second
file (another tune of the same buckets, its own process and cache), both picks are timed by that
tune: by its median placement where the kernel was a finalist there, else by its graph median,
as a ratio to that tune's best finalist.

    python3 scripts/placements_report.py race1.txt [race2.txt]
"""
import re
import statistics
import sys

FINALIST = re.compile(r"over \d+ placements of the operands \(([\d. ]+) us in turn\)")
ROW = re.compile(r"^\s+\d+\s+([\d.]+)\s+\S+\s+\S+\s+ok\s+(\S+)")
HEAD = re.compile(r"^(n\S+) M=(\d+) on ")


def parse(path):
    buckets, cur = {}, None
    with open(path) as f:
        for line in f:
            m = HEAD.match(line)
            if m:
                cur = (m.group(1), int(m.group(2)))
                buckets[cur] = {"finalists": {}, "graph": {}}
                continue
            m = ROW.match(line) if cur else None
            if not m:
                continue
            buckets[cur]["graph"][m.group(2)] = float(m.group(1))
            p = FINALIST.search(line)
            if p:
                buckets[cur]["finalists"][m.group(2)] = [float(x) for x in p.group(1).split()]
    return buckets


def median(v):  # the upper median, as the tuner keeps (policy.cpp, median_placement)
    return sorted(v)[len(v) // 2]


def short(name):
    return re.sub(r"^i8g_\w+?_n\d+_k\d+_\w+?_bf16_", "", name)[:36]


def main(paths):
    races = [parse(p) for p in paths]
    first, other = races[0], (races[1] if len(races) > 1 else None)
    n = same = 0
    cost_first, cost_median = [], []
    for key in sorted(first):
        fin = first[key]["finalists"]
        if len(fin) < 2:
            continue
        by_first = min(fin, key=lambda k: fin[k][0])
        by_median = min(fin, key=lambda k: median(fin[k]))
        n += 1
        same += by_first == by_median
        line = "%-28s M=%-5d first %-36s median %-36s cost %.3f" % (
            key[0], key[1], short(by_first), short(by_median), median(fin[by_first]) / median(fin[by_median]))
        if other and key in other:
            o = other[key]
            timed = lambda k: median(o["finalists"][k]) if k in o["finalists"] else o["graph"].get(k)
            best = min([median(v) for v in o["finalists"].values()] or o["graph"].values())
            a, b = timed(by_first), timed(by_median)
            if a and b:
                cost_first.append(a / best)
                cost_median.append(b / best)
                line += "  | other tune: first %.3f, median %.3f of its best" % (a / best, b / best)
        print(line)
    print(f"{n} buckets with two or more finalists; the first placement's pick is the median's in {same}")
    if cost_first:
        print("picks timed by the other tune: geometric mean %.4f (first placement) against %.4f (median "
              "placement); worst %.3f against %.3f" % (statistics.geometric_mean(cost_first),
                                                     statistics.geometric_mean(cost_median), max(cost_first),
                                                     max(cost_median)))


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    main(sys.argv[1:])

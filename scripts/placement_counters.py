#!/usr/bin/env python3
"""Which ncu counters follow a kernel's duration over many launches (scripts/gpu_placement_profile.sh).

Reads `ncu --csv --page raw` (a header row of metric names, a row of units, one row per launch)
and, per kernel name, prints the launches' durations and, for every numeric metric that varies,
its mean over the fastest and the slowest third of the launches, their ratio and its Pearson
correlation with gpu__time_duration.sum; the metrics sorted by |correlation|, strongest first.

    python3 scripts/placement_counters.py raw.csv [TOP]
"""
import csv
import statistics
import sys

DURATION = "gpu__time_duration.sum"


def number(text):
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def pearson(xs, ys):
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sx = sum((x - mx) ** 2 for x in xs) ** 0.5
    sy = sum((y - my) ** 2 for y in ys) ** 0.5
    return 0.0 if sx == 0 or sy == 0 else sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / (sx * sy)


def main(path, top):
    with open(path, newline="") as f:
        rows = [r for r in csv.reader(f)]
    start = next((i for i, r in enumerate(rows) if DURATION in r), None)
    if start is None:
        sys.exit(f"{path}: no {DURATION} column (not an ncu --page raw CSV)")
    head, units, data = rows[start], rows[start + 1], rows[start + 2:]
    name_col = head.index("Kernel Name")
    t_col = head.index(DURATION)
    by_kernel = {}
    for r in data:
        if len(r) == len(head) and number(r[t_col]) is not None:
            by_kernel.setdefault(r[name_col][:60], []).append(r)
    for kernel, launches in by_kernel.items():
        t = [number(r[t_col]) for r in launches]
        order = sorted(range(len(t)), key=lambda i: t[i])
        third = max(1, len(t) // 3)
        fast, slow = order[:third], order[-third:]
        q = statistics.quantiles(t, n=10) if len(t) > 2 else t
        print(f"== {kernel}: {len(t)} launches, {DURATION} ({units[t_col]}) min {min(t):.0f} p10 {q[0]:.0f} "
              f"median {statistics.median(t):.0f} p90 {q[-1]:.0f} max {max(t):.0f}")
        out = []
        for c, name in enumerate(head):
            v = [number(r[c]) for r in launches]
            if c == t_col or name == "ID" or any(x is None for x in v) or len(set(v)) < 2:
                continue
            f_mean = statistics.fmean(v[i] for i in fast)
            s_mean = statistics.fmean(v[i] for i in slow)
            out.append((abs(pearson(t, v)), pearson(t, v), name, units[c], f_mean, s_mean))
        out.sort(reverse=True)
        print(f"   {'r':>6}  {'fastest third':>14} {'slowest third':>14} {'slow/fast':>9}  metric (unit)")
        for _, r, name, unit, f_mean, s_mean in out[:top]:
            ratio = s_mean / f_mean if f_mean else float("nan")
            print(f"   {r:+.3f}  {f_mean:14.4g} {s_mean:14.4g} {ratio:9.3f}  {name} ({unit})")


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) == 3 else 30)

#!/usr/bin/env python3
"""The table of scripts/gpu_ab.sh: two builds' `inspect race` files, per tune point and rep.

  ab_report.py DIR     reads DIR/race_{A,B}_{rep}.txt; prints per point the best i8gemm kernel of
                       each build and rep, best B / best A, the same for cuBLASLt's best algorithm
                       (the same library in both builds: a control for the machine's drift between
                       runs), and the distribution of B / A over the kernels timed in every rep of
                       both builds (each kernel's mean over reps), then the kernels per point.
"""
import collections
import glob
import re
import statistics
import sys

PROBLEM = re.compile(r"(\S+) M=(\d+) on ")
ROW = re.compile(r"\s*\d+\s+([\d.]+)\s+[\d.]+\s+\S+\s+ok\s+(\S+)")


def read(folder):
    """{point: {(candidate, build, rep): graph us}}, only verified (ok) candidates."""
    t = collections.defaultdict(dict)
    for f in sorted(glob.glob(f"{folder}/race_*_*.txt")):
        build, rep = re.match(r".*/race_(A|B)_(\d+)\.txt$", f).groups()
        point = None
        for line in open(f):
            m = PROBLEM.match(line)
            if m:
                point = (m.group(1), int(m.group(2)))
                continue
            m = ROW.match(line)
            if m and point:
                t[point][(m.group(2), build, rep)] = float(m.group(1))
    return t


def short(name, problem):
    return name.split(problem + "_", 1)[-1] if problem in name else name


def main(folder):
    t = read(folder)
    if not t:
        sys.exit(f"ab_report: no race_A_*/race_B_* files with timed candidates in {folder}")
    reps = sorted({r for d in t.values() for (_, _, r) in d})
    print("| point | best A (" + ", ".join(f"r{r}" for r in reps) + ") | best B | B/A best | cuBLASLt B/A | kernels | "
          "B/A per kernel: median | min | max |")
    print("|---|---|---|---|---|---|---|---|---|")
    per_kernel = {}
    for point in sorted(t):
        d = t[point]

        def best(build, lt):
            out = []
            for r in reps:
                v = [x for (k, b, rr), x in d.items() if b == build and rr == r and k.startswith("cublaslt") == lt]
                out.append(min(v) if v else None)
            return out

        fmt = lambda v: ", ".join(f"{x:.2f}" if x else "-" for x in v)
        ratio = lambda a, b: f"{min(x for x in b if x) / min(x for x in a if x):.3f}" if any(a) and any(b) else "-"
        ka, kb, la, lb = best("A", False), best("B", False), best("A", True), best("B", True)
        rat = {}
        for k in sorted({k for (k, _, _) in d if not k.startswith("cublaslt")}):
            a = [d.get((k, "A", r)) for r in reps]
            b = [d.get((k, "B", r)) for r in reps]
            if all(a) and all(b):
                rat[k] = sum(b) / sum(a)
        per_kernel[point] = rat
        dist = (f"{statistics.median(rat.values()):.3f} | {min(rat.values()):.3f} | {max(rat.values()):.3f}"
                if rat else "- | - | -")
        print(f"| {point[0]} M={point[1]} | {fmt(ka)} | {fmt(kb)} | {ratio(ka, kb)} | {ratio(la, lb)} | {len(rat)} | "
              f"{dist} |")
    print("\nPer kernel, B / A (mean over reps):\n")
    for point, rat in sorted(per_kernel.items()):
        print(f"- {point[0]} M={point[1]}: " +
              ", ".join(f"{short(k, point[0])} {v:.3f}" for k, v in sorted(rat.items(), key=lambda kv: kv[1])))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])

#!/usr/bin/env python3
"""Per tuned bucket of an `i8gemm inspect race --json` document (a tune with
--experimental-packed-weight): the fastest packed-weight twin (_pw1) against the fastest plain
wgmma_tma kernel of the same tile (bm, bn, bk, schedule: any ring depth), the fastest plain
kernel of any family, and the stored winner (never a _pw1: serving passes the plain weight).
Graph-replay medians of the tune. Usage: packed_report.py RACE.json > table.md"""
import json
import re
import sys

TILE = re.compile(r"_bm(\d+)_bn(\d+)_bk(\d+)_wg\d+_s\d+_sc(\d+)")


def short(name):
    """The config part of a kernel name (from _bm on); other candidates as they are."""
    at = name.find("_bm")
    return name[at + 1:] if at >= 0 else name


def main(path):
    doc = json.load(open(path))
    print("| problem | M | best _pw1 | us | same tile, plain | us | pw/plain | best plain (any) | us | pw/best |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    worst = 0
    for b in doc["buckets"]:
        timed = [c for c in b["candidates"] if c.get("graph_median_us")]
        packed = [c for c in timed if c["candidate"].endswith("_pw1")]
        plain = [c for c in timed if not c["candidate"].endswith("_pw1")]
        if not packed or not plain:
            worst = 1
            print(f"| {b['problem']} | {b['m_bucket']} | (none timed) | | | | | | | |")
            continue
        pw = min(packed, key=lambda c: c["graph_median_us"])
        tile = TILE.search(pw["candidate"]).groups()
        same = [c for c in plain if (m := TILE.search(c["candidate"])) and m.groups() == tile]
        best = min(plain, key=lambda c: c["graph_median_us"])
        sp = min(same, key=lambda c: c["graph_median_us"]) if same else None
        t = pw["graph_median_us"]
        print(f"| {b['problem']} | {b['m_bucket']} | {short(pw['candidate'])} | {t:.2f} | "
              + (f"{short(sp['candidate'])} | {sp['graph_median_us']:.2f} | {t / sp['graph_median_us']:.3f} | "
                 if sp else "(none) | | | ")
              + f"{short(best['candidate'])} | {best['graph_median_us']:.2f} | {t / best['graph_median_us']:.3f} |")
    return worst


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))

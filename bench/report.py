#!/usr/bin/env python3
"""Merges benchmark JSON files (i8gemm, its C++ peers, bench/torch_peers.py) into one report.

Each input: {"device": str, "tool": str, "rows": [ROW...], optional "sm_count": int,
optional "ceilings": {"wgmma": {"tops", "sm_mhz", "power_w", "ops_per_clock_per_sm"}}} with
ROW = {"contender", "shape", "n", "k", "m", "status", "graph_median_us", "graph_p90_us",
"graph_min_us", "sm_mhz", "power_w", "verified", "note"}.

    python3 bench/report.py a.json b.json --md r.md --csv r.csv --json r.json --png r.png --title "H200"
"""
import argparse
import csv
import json
import math
import sys

# Column order of the tables; contenders not listed here follow in alphabetical order.
KNOWN_CONTENDERS = (
    "i8gemm", "cutlass_best", "cutlass_vllm_pick", "cublaslt_i8_dq_plain",
    "cublaslt_fp8", "torch_fp8_rowwise", "triton_w8a8", "cublaslt_i8_plain", "cublaslt_bf16", "read_ceiling",
)
OURS = "i8gemm"
# i8gemm's own cuBLASLt baseline (as `i8gemm bench` and, in the peers' process, i8gemm_peers time
# it) and its halves, against the plain configuration: a table of their own, not peers.
BASELINE = (
    ("cublaslt_i8_dq_plain", "plain i8+dq"), ("cublaslt_i8_dq_tuner", "i8gemm's i8+dq (bench)"),
    ("cublaslt_i8_dq_rt", "i8gemm's i8+dq (peers' process)"), ("cublaslt_i8_plain", "plain i8"),
    ("cublaslt_i8", "i8gemm's i8 (bench)"), ("cublaslt_i8_rt", "i8gemm's i8 (peers' process)"),
    ("dequant_plain", "plain dequant"), ("dequant", "i8gemm's dequant (bench)"),
    ("dequant_rt", "i8gemm's dequant (peers' process)"),
)
BASELINE_ONLY = frozenset(name for name, _ in BASELINE) - {"cublaslt_i8_dq_plain", "cublaslt_i8_plain"}
# Shown but never "best peer": i8gemm itself and its cuBLASLt baseline; cuBLASLt int8 -> int32
# without the dequant (a line to beat, not the fused operator); dequants alone; bf16 (other
# operand precision: ANCHORS.md's list of peers leaves it out); ceilings. Any contender whose
# name ends in "_ceiling" is a ceiling too.
NON_PEERS = frozenset({OURS, "cublaslt_i8_plain", "cublaslt_bf16", "read_ceiling", "wgmma_ceiling"}) | BASELINE_ONLY
DEFAULT_SM_COUNT = 132  # H200
DECODE_MAX_M = 16       # rows up to this M show weight TB/s instead of TOPS
# i8gemm's cuBLASLt baseline (either measurement) against the plain configuration: at most 3% slower.
TUNER_VS_PLAIN = (("cublaslt_i8_dq_tuner", "cublaslt_i8_dq_rt"), "cublaslt_i8_dq_plain", 1.03)
ROW_FIELDS = ("contender", "shape", "n", "k", "m", "status", "graph_median_us", "graph_p90_us",
              "graph_min_us", "sm_mhz", "power_w", "verified", "note")


class InputError(Exception):
    pass


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("inputs", nargs="+", metavar="IN.json")
    ap.add_argument("--md", required=True)
    ap.add_argument("--csv", required=True)
    ap.add_argument("--json", required=True)
    ap.add_argument("--png", required=True)
    ap.add_argument("--title", default="i8gemm against its peers")
    return ap.parse_args(argv)


def load(paths):
    """Rows of all files (each tagged with tool, device, file, sm_count) and the ceilings."""
    rows, ceilings, devices = [], {}, []
    for path in paths:
        try:
            with open(path) as f:
                doc = json.load(f)
        except (OSError, ValueError) as exc:
            raise InputError(f"{path}: cannot read JSON: {exc}") from None
        if not isinstance(doc, dict) or not isinstance(doc.get("rows"), list):
            raise InputError(f"{path}: expected an object with a 'rows' list")
        devices.append(doc.get("device"))
        ceilings.update(doc.get("ceilings") or {})
        for i, row in enumerate(doc["rows"]):
            missing = [f for f in ("contender", "shape", "n", "k", "m") if not isinstance(row, dict) or f not in row]
            if missing:
                raise InputError(f"{path}: row {i} lacks {', '.join(missing)}")
            bad = [f for f in ("n", "k", "m") if not isinstance(row[f], int) or row[f] < 1]
            if bad:
                raise InputError(f"{path}: row {i}: {', '.join(bad)} must be positive integers")
            full = {f: row.get(f) for f in ROW_FIELDS}
            full.update(row)
            full.update(tool=doc.get("tool"), device=doc.get("device"), file=path,
                        sm_count=row.get("sm_count") or doc.get("sm_count") or DEFAULT_SM_COUNT)
            rows.append(full)
    return rows, ceilings, devices


def time_us(row):
    t = row.get("graph_median_us")
    ok = row.get("status") == "ok" and isinstance(t, (int, float)) and t > 0 and math.isfinite(t)
    return float(t) if ok else None


def ops(row):
    return 2.0 * row["m"] * row["n"] * row["k"]


def tops(row):
    t = time_us(row)
    return ops(row) / (t * 1e6) if t else None


def ops_per_clock_per_sm(row):
    t, mhz = time_us(row), row.get("sm_mhz")
    return ops(row) / (t * mhz * row["sm_count"]) if t and mhz else None


def is_peer(name):
    """i8gemm_* rows (i8gemm under other settings, e.g. i8gemm_nopdl) are shown, never peers."""
    return name not in NON_PEERS and not name.startswith(OURS + "_") and not name.endswith("_ceiling")


def index(rows):
    """{(shape, n, k): {m: {contender: row}}}; a later file's row replaces an earlier one."""
    table = {}
    for r in rows:
        cell = table.setdefault((r["shape"], r["n"], r["k"]), {}).setdefault(r["m"], {})
        if r["contender"] in cell:
            print(f"report: {r['contender']} {r['shape']} M={r['m']} appears twice; using {r['file']}",
                  file=sys.stderr)
        cell[r["contender"]] = r
    return table


def contender_order(names):
    known = [c for c in KNOWN_CONTENDERS if c in names]
    return known + sorted(set(names) - set(known))


def best_peer(by_name):
    """Fastest verified-or-unchecked peer that ran: (row, time) or (None, None)."""
    ok = [(time_us(r), r) for n, r in by_name.items()
          if is_peer(n) and time_us(r) and r.get("verified") is not False]
    if not ok:
        return None, None
    t, r = min(ok, key=lambda p: p[0])
    return r, t


def ratio_text(peer_t, ours_t):
    return f"{peer_t / ours_t:.2f}x" if peer_t and ours_t else "—"


def cell_text(row, notes):
    """'61.3 (1401)': µs and TOPS, or µs and weight TB/s for decode rows; '— [n]' with a footnote."""
    t = time_us(row) if row else None
    if row is None:
        return ""
    if t is None:
        reason = row.get("status") or "no time"
        if reason == "ok":
            reason = "status ok but no usable time"
        notes.setdefault(reason, len(notes) + 1)
        return f"— [{notes[reason]}]"
    if row["m"] <= DECODE_MAX_M:
        text = f"{t:.2f} ({row['n'] * row['k'] / (t * 1e6):.2f})"
    else:
        text = f"{t:.1f} ({tops(row):.0f})"
    return text + (" ✗" if row.get("verified") is False else "")


def clock_text(row, ceiling_opc):
    if row is None or time_us(row) is None:
        return "—"
    opc = ops_per_clock_per_sm(row)
    if opc is None:
        return "—"
    share = f" ({100 * opc / ceiling_opc:.0f}%)" if ceiling_opc else ""
    return f"{row['sm_mhz']:.0f} MHz, {opc:.0f}{share}"


def wgmma_ops_per_clock(ceilings, sm_count):
    c = ceilings.get("wgmma") or {}
    if c.get("ops_per_clock_per_sm"):
        return float(c["ops_per_clock_per_sm"])
    if c.get("tops") and c.get("sm_mhz"):
        return c["tops"] * 1e12 / (c["sm_mhz"] * 1e6 * sm_count)
    return None


def shape_table(key, by_m, ceiling_opc):
    """Markdown lines for one shape."""
    name, n, k = key
    names = contender_order({c for cells in by_m.values() for c in cells} - BASELINE_ONLY)
    notes = {}
    # i8gemm under other settings (i8gemm_packed: bench --experimental-packed-weight) get their own
    # ratio against the same best peer, after the clocks.
    variants = [c for c in names if c.startswith(OURS + "_")]
    head = (["M"] + names + ["best peer", "i8gemm / best peer", "i8gemm MHz, ops/clk/SM", "best peer MHz, ops/clk/SM"]
            + [f"{v} / best peer" for v in variants])
    lines = [f"## {name} (N={n}, K={k}, weight {n * k / 1e6:.1f} MB)", "",
             f"µs per call (graph replay median); in parentheses weight TB/s for M ≤ {DECODE_MAX_M}, "
             "TOPS otherwise. ✗: output did not verify (never counted as best peer). "
             "Ratio > 1: i8gemm faster.", "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for m in sorted(by_m):
        cells = by_m[m]
        peer, peer_t = best_peer(cells)
        ours = cells.get(OURS)
        row = [str(m)] + [cell_text(cells.get(c), notes) for c in names]
        row += [f"{peer['contender']} {peer_t:.2f}" if peer else "—",
                ratio_text(peer_t, time_us(ours) if ours else None),
                clock_text(ours, ceiling_opc), clock_text(peer, ceiling_opc)]
        row += [ratio_text(peer_t, time_us(cells[v]) if v in cells else None) for v in variants]
        lines.append("| " + " | ".join(row) + " |")
    lines.append("")
    lines += [f"[{i}] {reason}" for reason, i in notes.items()]
    if ceiling_opc:
        best = max((o for cells in by_m.values() if OURS in cells
                    for o in [ops_per_clock_per_sm(cells[OURS])] if o), default=None)
        lines.append(f"\nwgmma ceiling {ceiling_opc:.0f} ops/clock/SM; i8gemm's best row here: "
                     + (f"{best:.0f} ({100 * best / ceiling_opc:.0f}%)." if best else "no clock data."))
    return lines + [""]


def label(key):
    """A shape as people read it: its name and N×K (names repeat across models: o_proj)."""
    return f"{key[0]} {key[1]}×{key[2]}"


def baseline_lines(table):
    """Markdown: i8gemm's cuBLASLt baseline and its halves beside the plain configuration."""
    present = [(c, label) for c, label in BASELINE
               if any(c in cells for by_m in table.values() for cells in by_m.values())]
    tuners, plain, limit = TUNER_VS_PLAIN
    if not any(c in tuners for c, _ in present):
        return []
    head = ["shape", "M"] + [label for _, label in present] + [f"{t} / plain" for t in tuners if t in dict(present)]
    lines = ["## cuBLASLt baseline: i8gemm's composite against the plain configuration", "",
             "µs per call (graph replay median). The plain configuration is cuBLASLt int8 -> int32 (best "
             "of its heuristic algorithms, 64 MB workspace) + a vectorized dequant, as cuBLASLt's users "
             "call it; i8gemm's is runtime/gpu/lt_dequant (what `tune` races), timed by `i8gemm bench` "
             "and, beside the plain one in the same process, by i8gemm_peers. Check: ratio ≤ "
             f"{limit:.2f}.", "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for key in sorted(table):
        for m in sorted(table[key]):
            cells = table[key][m]
            row = [label(key), str(m)]
            row += [f"{time_us(cells[c]):.2f}" if c in cells and time_us(cells[c]) else "—" for c, _ in present]
            b = time_us(cells[plain]) if plain in cells else None
            for t in tuners:
                if t not in dict(present):
                    continue
                a = time_us(cells[t]) if t in cells else None
                row.append(f"{a / b:.3f}{'' if a / b <= limit else ' ✗'}" if a and b else "—")
            lines.append("| " + " | ".join(row) + " |")
    return lines + [""]


# The issues' targets (issue 13: decode; issue 12: Hopper). Ratio = best peer time / i8gemm time.
DECODE_CEILING = (1.03, 1.0)    # M <= 16: i8gemm <= 1.03 x read ceiling + 1 us, and ratio >= 1
SMALL_M = (17, 64)               # ratio >= 1 at every point
MID_M = (64, 1024, 1.15)         # geometric mean >= 1.15, no point below 1
LARGE_M = (2048, 1.05)           # geometric mean >= 1.05, no point below 1


# The two ways i8gemm is timed: by `i8gemm bench` in its own process (OURS), and by i8gemm_peers
# through the runtime in the peers' own process (i8gemm_rt: what prepare picks, on the peers'
# buffers, by the same timing code), free of the bench process's small-kernel slowdown
# (docs/performance.md). The targets are computed for each that ran.
SAME_PROCESS = "i8gemm_rt"


def ratios(table, ours=OURS):
    """{(key, m): best peer time / `ours` time} where both ran and `ours` did not fail verification."""
    out = {}
    for key, by_m in table.items():
        for m, cells in by_m.items():
            _, peer_t = best_peer(cells)
            mine = cells.get(ours)
            ours_t = time_us(mine) if mine and mine.get("verified") is not False else None
            if peer_t and ours_t:
                out[(key, m)] = peer_t / ours_t
    return out


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def window_line(what, rs, mean_target=None):
    if not rs:
        return f"- {what}: no points"
    gm, low = geomean(rs), min(rs)
    verdict = "met" if low >= 1.0 and (mean_target is None or gm >= mean_target) else "not met"
    target = f"geometric mean ≥ {mean_target:.2f}x and " if mean_target else ""
    return (f"- {what} ({target}none below 1.00x): {len(rs)} points, geometric mean {gm:.2f}x, "
            f"lowest {low:.2f}x, {sum(r >= 1.0 for r in rs)} at or above 1.00x — **{verdict}**")


TARGET_HEADINGS = {
    OURS: ("## Against the issues' targets",
           "Best peer time / i8gemm time (> 1: i8gemm faster), i8gemm timed by `i8gemm bench` in its own "
           "process, every shape and M of this report:"),
    SAME_PROCESS: ("## Against the issues' targets, i8gemm timed in the peers' process (i8gemm_rt)",
                   "The same kernels (what prepare picks from the same cache) run through the runtime by "
                   "i8gemm_peers, in the process and on the buffers the peers use, by the same timing code; "
                   "best peer time / i8gemm_rt time:"),
}


def targets_lines(table, ours=OURS):
    """The ratio grid (shape x M) and the issues' acceptance windows, computed from the table."""
    rs = ratios(table, ours)
    if not rs:
        return []
    ms = sorted({m for by_m in table.values() for m, cells in by_m.items() if ours in cells})  # "—": unverified
    heading, intro = TARGET_HEADINGS[ours]
    lines = [heading, "", intro, "",
             "| shape | " + " | ".join(f"M = {m}" for m in ms) + " |", "|---|" + "---|" * len(ms)]
    for key in sorted(table):
        lines.append(f"| {label(key)} | " + " | ".join(f"{rs[(key, m)]:.2f}" if (key, m) in rs else "—"
                                                      for m in ms) + " |")
    lines.append("")
    factor, extra = DECODE_CEILING
    met, checked, unchecked, misses = 0, 0, 0, []
    for (key, m), r in sorted(rs.items()):
        if m > DECODE_MAX_M:
            continue
        cells = table[key][m]
        ceil_t, ours_t = time_us(cells.get("read_ceiling") or {}), time_us(cells[ours])
        if not ceil_t:
            unchecked += 1
            continue
        checked += 1
        limit = factor * ceil_t + extra
        if ours_t <= limit and r >= 1.0:
            met += 1
        else:
            misses.append(f"{label(key)} M={m} ({ours_t:.2f} µs against {limit:.2f}, {r:.2f}x)")
    lines.append(f"- M ≤ {DECODE_MAX_M} (i8gemm ≤ {factor:.2f} × read ceiling + {extra:.0f} µs and ≥ the best peer): "
                 f"{met} of {checked} points met" + (f" ({unchecked} without a read ceiling)" if unchecked else "")
                 + (f"; missed: {'; '.join(misses)}" if misses else "")
                 + ((" — **met where checked**" if unchecked else " — **met**") if checked and met == checked
                    else " — **not met**" if checked else ""))
    lines.append(window_line(f"{SMALL_M[0]} ≤ M ≤ {SMALL_M[1]}",
                             [r for (_, m), r in rs.items() if SMALL_M[0] <= m <= SMALL_M[1]]))
    lines.append(window_line(f"{MID_M[0]} ≤ M ≤ {MID_M[1]}",
                             [r for (_, m), r in rs.items() if MID_M[0] <= m <= MID_M[1]], MID_M[2]))
    lines.append(window_line(f"M ≥ {LARGE_M[0]}", [r for (_, m), r in rs.items() if m >= LARGE_M[0]], LARGE_M[1]))
    return lines + [""]


def floor_us(cells, ceiling_opc, sm_count):
    """The least time any kernel could take at this point, under the two ceilings of this run: the
    read ceiling's time for the same weight bytes, and 2MNK at the wgmma ceiling's work per clock
    and SM on every SM at the highest SM clock any contender held here. None without both."""
    read = time_us(cells.get("read_ceiling") or {})
    clocks = [r["sm_mhz"] for r in cells.values() if time_us(r) and r.get("sm_mhz") and r.get("verified") is not False]
    if not read or not ceiling_opc or not clocks:
        return None
    some = next(iter(cells.values()))
    compute = ops(some) / (ceiling_opc * sm_count * max(clocks) * 1e6) * 1e6
    return max(read, compute)


def headroom_lines(table, ceilings, sm_count):
    """Markdown: per point, best peer time / floor_us — the ratio a kernel at both ceilings would
    reach; the issues' windows ask for ratios this large or less, so this is what they allow."""
    ceiling_opc = wgmma_ops_per_clock(ceilings, sm_count)
    bound = {}
    for key, by_m in table.items():
        for m, cells in by_m.items():
            _, peer_t = best_peer(cells)
            floor = floor_us(cells, ceiling_opc, sm_count)
            if peer_t and floor:
                bound[(key, m)] = peer_t / floor
    if not bound:
        return []
    ms = sorted({m for _, m in bound})
    lines = ["## What the ceilings allow", "",
             "Best peer time / the least time the run's two ceilings allow (the read ceiling for the same "
             "weight bytes, or 2MNK at the wgmma ceiling's ops/clock/SM on every SM at the highest SM clock "
             "any contender held at that point, whichever is longer): the ratio a kernel at both ceilings "
             "would reach: no kernel's ratio at that point can pass it, so a window's mean target above the "
             "mean of these bounds cannot be met.", "",
             "| shape | " + " | ".join(f"M = {m}" for m in ms) + " |", "|---|" + "---|" * len(ms)]
    for key in sorted(table):
        lines.append(f"| {label(key)} | " + " | ".join(f"{bound[(key, m)]:.2f}" if (key, m) in bound else "—"
                                                      for m in ms) + " |")
    lines.append("")
    for what, lo, hi, target in ((f"{MID_M[0]} ≤ M ≤ {MID_M[1]}", MID_M[0], MID_M[1], MID_M[2]),
                                 (f"M ≥ {LARGE_M[0]}", LARGE_M[0], None, LARGE_M[1])):
        rs = [r for (_, m), r in bound.items() if m >= lo and (hi is None or m <= hi)]
        if rs:
            below = sum(r < target for r in rs)
            lines.append(f"- {what}: {len(rs)} points, geometric mean of the bound {geomean(rs):.2f}x (target "
                         f"{target:.2f}x), lowest {min(rs):.2f}x, {below} below the target")
    return lines + [""]


def markdown(title, table, ceilings, devices, sm_count):
    ceiling_opc = wgmma_ops_per_clock(ceilings, sm_count)
    lines = [f"# {title}", "", "Devices: " + ", ".join(sorted({str(d) for d in devices})) + ".",
             "Peers for 'best peer': every contender except " + ", ".join(sorted(NON_PEERS))
             + " and any *_ceiling. ops/clk/SM = 2MNK / (t × SM clock × SMs)"
             + (f", and % of the wgmma ceiling's {ceiling_opc:.0f}." if ceiling_opc else "."), ""]
    w = ceilings.get("wgmma")
    if w:
        shown = (f"{v:.4g}" if isinstance(v, float) else str(v) for v in w.values())  # 1870, not 1870.2148662435557
        lines += ["wgmma ceiling: " + ", ".join(f"{k} {v}" for k, v in zip(w, shown)) + ".", ""]
    lines += targets_lines(table) + targets_lines(table, SAME_PROCESS) + headroom_lines(table, ceilings, sm_count)
    for key in sorted(table):
        lines += shape_table(key, table[key], ceiling_opc)
    lines += baseline_lines(table)
    return "\n".join(lines)


def stdout_summary(table):
    print(f"{'shape':<24} {'M':>5} {'i8gemm us':>10} {'best peer':>28} {'ratio':>7}")
    for key in sorted(table):
        for m in sorted(table[key]):
            cells = table[key][m]
            peer, peer_t = best_peer(cells)
            ours_t = time_us(cells[OURS]) if OURS in cells else None
            print(f"{label(key):<24} {m:>5} {f'{ours_t:.2f}' if ours_t else '—':>10} "
                  f"{(peer['contender'] + f' {peer_t:.2f}') if peer else '—':>28} {ratio_text(peer_t, ours_t):>7}")
    tuners, plain, limit = TUNER_VS_PLAIN
    for tuner in tuners:
        if not any(tuner in cells or plain in cells for by_m in table.values() for cells in by_m.values()):
            print(f"no {tuner} / {plain} rows: tuner check skipped")
            continue
        for key in sorted(table):
            for m in sorted(table[key]):
                cells = table[key][m]
                a = time_us(cells[tuner]) if tuner in cells else None
                b = time_us(cells[plain]) if plain in cells else None
                verdict = (f"{'yes' if a / b <= limit else 'no'} ({a / b:.3f})" if a and b
                           else "n/a (" + ", ".join(x for x, t in ((tuner, a), (plain, b)) if not t) + " missing)")
                print(f"{label(key)} M={m}: {tuner} within {100 * (limit - 1):.0f}% of {plain}: {verdict}")


def write_csv(path, rows):
    fields = list(ROW_FIELDS) + ["tool", "device", "file", "sm_count"]
    fields += sorted({f for r in rows for f in r} - set(fields))
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)


def plot(path, title, table):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        print(f"report: matplotlib missing ({exc}); no plot written", file=sys.stderr)
        return
    keys = sorted(table)
    cols = min(3, len(keys)) or 1
    rows = math.ceil(len(keys) / cols) or 1
    fig, axes = plt.subplots(rows, cols, figsize=(6 * cols, 4.5 * rows), squeeze=False)
    for ax, key in zip(axes.flat, keys):
        by_m = table[key]
        for name in contender_order({c for cells in by_m.values() for c in cells} - BASELINE_ONLY):
            pts = [(m, time_us(cells[name])) for m, cells in sorted(by_m.items())
                   if name in cells and time_us(cells[name])]
            if not pts:
                continue
            style = dict(linestyle="--", color="black", linewidth=1) if name == "read_ceiling" else {}
            if name == OURS:
                style = dict(linewidth=2.5, color="black")
            ax.plot(*zip(*pts), marker="o", markersize=3, label=name, **style)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_title(f"{key[0]} (N={key[1]}, K={key[2]})")
        ax.set_xlabel("M")
        ax.set_ylabel("µs per call (graph replay median)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(keys):]:
        ax.axis("off")
    fig.suptitle(title + " (lower is better; dashed: reading the weight once)")
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    fig.savefig(path, dpi=80)
    plt.close(fig)


def main(argv):
    args = parse_args(argv)
    try:
        rows, ceilings, devices = load(args.inputs)
    except InputError as exc:
        print(f"report: {exc}", file=sys.stderr)
        return 2
    if not rows:
        print("report: the inputs hold no rows", file=sys.stderr)
        return 2
    table = index(rows)
    sm_count = rows[0]["sm_count"]
    with open(args.md, "w") as f:
        f.write(markdown(args.title, table, ceilings, devices, sm_count) + "\n")
    write_csv(args.csv, rows)
    with open(args.json, "w") as f:
        json.dump({"title": args.title, "inputs": args.inputs, "devices": devices, "ceilings": ceilings,
                   "sm_count": sm_count, "rows": rows}, f, indent=1)
        f.write("\n")
    stdout_summary(table)
    plot(args.png, args.title, table)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

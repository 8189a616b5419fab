#!/usr/bin/env python3
"""Where a wgmma_tma block's time goes, from inside the kernel (a diagnostic, not a test).

  instrument IN.cu OUT.cu [--launch L]
      IN is `i8gemm inspect source NAME --inline` of a wgmma_tma kernel. OUT is the same kernel
      with time stamps: every thread reads %globaltimer and clock64 at entry; each consumer
      warpgroup's first thread notes (clock64) when the barriers are ready, when its first
      K tile arrived, and when its last unit's main loop and epilogue ended; on launch L of the
      process (counted per consumer in a __device__ counter; default 60, deep in a tune's
      timing) each consumer prints one line. Put OUT as NAME.cu in a folder and run
      `I8GEMM_SOURCE_OVERRIDE_DIR=folder i8gemm tune --filter 'NAME$' ...`: the tuner checks it
      bit-exact as any kernel, and the lines land in its stdout.
  instrument-tiles IN.cu OUT.cu
      Per work unit instead of per consumer, and without printf (a printf call in the kernel
      makes ptxas serialize every wgmma, C7510: session 38 saw the stamped ping-pong 128x128 run
      134 us against 96): each consumer's first thread notes (clock64 from its block's entry)
      when it got each unit, when its turn came (ping-pong), when the unit's first K tile
      arrived, the cycles it spent waiting for K tiles, when the unit's main loop and its
      epilogue ended, and per consumer its SM, entry and exit %globaltimer and cycles, into the
      global `i8g_probe` (16 units per consumer at most, 1024 blocks). bench/timeline_main.cpp
      (i8gemm_timeline) launches such a kernel over fresh operands and writes those stamps out
      as `tile` and `cons` lines.
  report-tiles LOG
      Per launch of i8gemm_timeline's log: its span (first entry to last consumer done, by
      %globaltimer), the spread of block ends, main loops and K-tile waits, and what the last
      blocks to finish had (their SMs, units, main loop times, start); then the slowest against
      the fastest third of the launches.
  report LOG
      Reads those lines: per consumer the start skew (its block's entry after the first block's,
      ns), and the cycles from entry to barriers ready, to its first K tile, to the end of its
      main loop and of its epilogue, converted to ns with the clock the lines themselves show;
      prints the distribution (min / median / max over consumers) of each.
      (Its printf makes ptxas serialize the kernel's wgmma, C7510, so its times are not the
      kernel's: use instrument-tiles.)
"""
import re
import statistics
import sys

from source_variant import CONSUMERS, KERNEL, once, split_kernel

# Device helpers both stampings put beside the kernel: %globaltimer and the SM's id.
HELPERS = ("__device__ __forceinline__ unsigned long long i8g_gtime() { unsigned long long t; "
           "asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t)); return t; }\n"
           "__device__ __forceinline__ unsigned i8g_smid() { unsigned s; "
           "asm volatile(\"mov.u32 %0, %%smid;\" : \"=r\"(s)); return s; }\n")
# Every thread's entry stamps (%globaltimer and clock64), before the shared memory's setup.
ENTRY = "  const unsigned base = (smem_addr(smem)"
ENTRY_STAMPS = "  const unsigned long long p_g0 = i8g_gtime();\n  const long long p_c0 = clock64();\n" + ENTRY


def stamp_entry(src, globals_):
    """The kernel's source split at its consumers: (what precedes them, with `globals_` and the
    helpers before the templates' namespace and the entry stamps in the kernel; the consumers)."""
    if KERNEL not in src:
        sys.exit("no wgmma_tma_kernel in this source (give `i8gemm inspect source NAME --inline` of a wgmma_tma "
                 "kernel)")
    head, body = split_kernel(src)
    head = once(head, "namespace i8g {", globals_ + "namespace i8g {\n" + HELPERS)
    body = once(body, ENTRY, ENTRY_STAMPS)
    split = body.index(CONSUMERS)
    return head + body[:split], body[split:]


PRINT = ("probe L=%u blk=%d c=%d sm=%u units=%d g0=%llu g1=%llu clk=%llu ready=%lld first=%lld "
         "main=%lld epi=%lld\\n")


def instrument(src, launch):
    front, body = stamp_entry(src, "")
    front = once(front, "namespace i8g {\n", "namespace i8g {\n__device__ unsigned i8g_probe_ticket;\n")
    front = once(front, "  grid_order();\n", "  grid_order();\n  const long long p_ready = clock64() - p_c0;\n",
                 front.index(KERNEL))
    body = once(body, CONSUMERS,
                CONSUMERS +
                "  const unsigned p_launch = t == 0 ? atomicAdd(&i8g_probe_ticket, 1u) / (2u * gridDim.x) : 0u;\n"
                "  long long p_first = -1, p_main = -1, p_epi = -1;\n  int p_units = 0;\n")
    body = once(body, "      tma::mbar_wait(full(stage), phase);\n",
                "      tma::mbar_wait(full(stage), phase);\n"
                "      if (p_first < 0) p_first = clock64() - p_c0;\n")
    body = once(body, "    tma::wgmma_wait<0>();\n",
                "    tma::wgmma_wait<0>();\n    p_main = clock64() - p_c0;\n    ++p_units;\n")
    # The epilogue's end: the end of the unit loop's body, before the cluster's final meeting.
    body = once(body, "  // With a cluster, no block exits while the other may still arrive",
                "  p_epi = clock64() - p_c0;\n"
                f"  if (t == 0 && p_launch == {launch}u)\n"
                f"    printf(\"{PRINT}\", p_launch, int(blockIdx.x), c, i8g_smid(), p_units, p_g0, i8g_gtime(),\n"
                "           (unsigned long long)(clock64() - p_c0), p_ready, p_first, p_main, p_epi);\n"
                "  // With a cluster, no block exits while the other may still arrive")
    return front + body


# One consumer's row of i8g_probe: 16 units of 8 words (start, tm, tn, turn, first K tile, K-tile
# wait cycles, main loop end, epilogue end), then its header (units, SM, entry and exit
# %globaltimer, cycles). bench/timeline_main.cpp reads the same layout.
PROBE_UNITS, PROBE_WORDS = 16, 8
PROBE_ROW = (PROBE_UNITS + 1) * PROBE_WORDS


def instrument_tiles(src):
    front, body = stamp_entry(src, f'extern "C" __device__ long long i8g_probe[1024 * 2 * {PROBE_ROW}];\n')
    body = once(body, CONSUMERS,
                CONSUMERS +
                "  const bool p_on = t == 0 && blockIdx.x < 1024u;\n"
                f"  long long* const p_row = i8g_probe + (blockIdx.x * 2 + c) * {PROBE_ROW};\n"
                "  int p_n = 0;\n  long long p_kw = 0;\n")
    # The unit's start: it is known (and ping-pong's turn not yet waited for).
    body = once(body, "    const int tm = w.tm, tn = w.tn;\n",
                "    const int tm = w.tm, tn = w.tn;\n"
                "    if (p_on && p_n < 16) { p_row[p_n * 8 + 0] = clock64() - p_c0; p_row[p_n * 8 + 1] = tm;"
                " p_row[p_n * 8 + 2] = tn; }\n    p_kw = 0;\n")
    body = once(body, "    // No group is in flight here (wait_group 0 ended the last tile), so zeroing is safe.\n",
                "    if (p_on && p_n < 16) p_row[p_n * 8 + 3] = clock64() - p_c0;\n"
                "    // No group is in flight here (wait_group 0 ended the last tile), so zeroing is safe.\n")
    body = once(body, "      tma::mbar_wait(full(stage), phase);\n",
                "      const long long p_b = p_on ? clock64() : 0;\n"
                "      tma::mbar_wait(full(stage), phase);\n"
                "      if (p_on) { const long long p_a = clock64(); p_kw += p_a - p_b;"
                " if (kt == 0 && p_n < 16) p_row[p_n * 8 + 4] = p_a - p_c0; }\n")
    body = once(body, "    tma::wgmma_wait<0>();\n",
                "    tma::wgmma_wait<0>();\n"
                "    if (p_on && p_n < 16) { p_row[p_n * 8 + 5] = p_kw; p_row[p_n * 8 + 6] = clock64() - p_c0; }\n")
    stamp_e = "        if (p_on && p_n < 16) p_row[p_n * 8 + 7] = clock64() - p_c0;\n        ++p_n;\n"
    if "        store_tile_tma<MI" in body:
        i = body.index("        store_tile_tma<MI")
        j = body.index("        continue;\n", i)
        body = body[:j] + stamp_e + body[j:]
    body = once(body, "    store_tile<MI, BN, PRE_EPI, WSC, OUT, BIAS, ASYM>(args, acc, ops, row0, (long long)tn * BN, M, N, t);\n",
                "    store_tile<MI, BN, PRE_EPI, WSC, OUT, BIAS, ASYM>(args, acc, ops, row0, (long long)tn * BN, M, N, t);\n"
                + stamp_e.replace("        ", "    "))
    body = once(body, "  // With a cluster, no block exits while the other may still arrive",
                "  if (p_on) {\n"
                "    long long* h = p_row + 16 * 8;\n"
                "    h[0] = p_n; h[1] = i8g_smid(); h[2] = (long long)p_g0; h[3] = (long long)i8g_gtime();"
                " h[4] = clock64() - p_c0;\n"
                "  }\n"
                "  // With a cluster, no block exits while the other may still arrive")
    return front + body


def report_tiles(lines):
    tpat = re.compile(r"tile L=(\d+) b=(\d+) c=(\d+) sm=(\d+) j=(\d+) tm=(-?\d+) tn=(-?\d+) s=(-?\d+) w=(-?\d+) "
                      r"f=(-?\d+) kw=(-?\d+) m=(-?\d+) e=(-?\d+)")
    cpat = re.compile(r"cons L=(\d+) b=(\d+) c=(\d+) sm=(\d+) n=(\d+) g0=(\d+) g1=(\d+) clk=(\d+)")
    lpat = re.compile(r"launch L=(\d+) row=(\d+) event_us=([\d.]+)")
    tiles, cons, meta = {}, {}, {}
    for ln in lines:
        m = lpat.search(ln)
        if m:
            meta[int(m.group(1))] = (int(m.group(2)), float(m.group(3)))
            continue
        m = tpat.search(ln)
        if m:
            v = [int(x) for x in m.groups()]
            tiles.setdefault(v[0], []).append(dict(zip("L b c sm j tm tn s w f kw m e".split(), v)))
            continue
        m = cpat.search(ln)
        if m:
            v = [int(x) for x in m.groups()]
            cons.setdefault(v[0], []).append(dict(zip("L b c sm n g0 g1 clk".split(), v)))
    if not cons:
        sys.exit("report-tiles: no cons lines")
    med = statistics.median
    summary = []
    for launch in sorted(cons):
        cs, ts = cons[launch], tiles.get(launch, [])
        ghz = med(c["clk"] / (c["g1"] - c["g0"]) for c in cs if c["g1"] > c["g0"])
        g_first = min(c["g0"] for c in cs)
        # A block ends when its last consumer does (its entry + the consumer's cycles).
        ends = {}
        for c in cs:
            e = c["g0"] - g_first + c["clk"] / ghz
            ends[c["b"]] = max(ends.get(c["b"], 0.0), e)
        span = max(ends.values())
        main = [(t["m"] - t["w"]) / ghz for t in ts]
        epi = [(t["e"] - t["m"]) / ghz for t in ts]
        kw = [t["kw"] / ghz for t in ts]
        turn = [(t["w"] - t["s"]) / ghz for t in ts]
        start = [c["g0"] - g_first for c in cs]
        by_b = {}
        for t in ts:
            by_b.setdefault(t["b"], []).append(t)
        sm_of = {c["b"]: c["sm"] for c in cs}
        g0_of = {c["b"]: c["g0"] - g_first for c in cs}
        last = sorted(ends, key=ends.get)[-6:]
        # The share of the blocks' SM time after each block's end until the launch's (what ncu's
        # SM active / elapsed cycles leave out): the spread of block ends, quantization included.
        idle = 1.0 - statistics.mean(ends.values()) / span if span > 0 else 0.0
        summary.append(dict(L=launch, span=span, ghz=ghz, main=med(main) if main else 0, kw=med(kw) if kw else 0,
                            idle=idle, ends=ends,
                            main_max=max(main) if main else 0, end_min=min(ends.values()), end_med=med(ends.values()),
                            start_max=max(start), blocks=len(ends), units=len(ts)))
        row, event = meta.get(launch, (-1, 0.0))
        summary[-1].update(row=row, event=event)
        print(f"launch {launch} (row {row}, event {event:.1f} us): {len(ends)} blocks, {len(ts)} units, "
              f"span {span / 1e3:.1f} us, SM ~{ghz:.2f} GHz; "
              f"block ends min {min(ends.values()) / 1e3:.1f} median {med(ends.values()) / 1e3:.1f} us "
              f"(SMs idle after their block's end {idle:.1%}); latest entry {max(start) / 1e3:.2f} us")
        if main:
            q = sorted(main)
            print(f"  per unit (us): main loop median {med(main) / 1e3:.2f} (p10 {q[len(q) // 10] / 1e3:.2f}, "
                  f"p90 {q[9 * len(q) // 10] / 1e3:.2f}, max {max(main) / 1e3:.2f}), of it waiting for K tiles "
                  f"median {med(kw) / 1e3:.2f} max {max(kw) / 1e3:.2f}; epilogue median {med(epi) / 1e3:.2f} "
                  f"max {max(epi) / 1e3:.2f}; turn wait median {med(turn) / 1e3:.2f}")
        for b in reversed(last):
            us = by_b.get(b, [])
            print(f"  late block {b:>3} sm {sm_of[b]:>3}: end {ends[b] / 1e3:6.1f} us, entry {g0_of[b] / 1e3:5.2f}, "
                  f"{len(us)} units, main loops " + " ".join(f"{(t['m'] - t['w']) / ghz / 1e3:.1f}" for t in
                                                            sorted(us, key=lambda t: t['s'])) +
                  ", K waits " + " ".join(f"{t['kw'] / ghz / 1e3:.1f}" for t in sorted(us, key=lambda t: t['s'])) +
                  ", tiles " + " ".join(f"{t['tm']},{t['tn']}" for t in sorted(us, key=lambda t: t['s'])))
    rows = {}
    for r in summary:
        rows.setdefault(r["row"], []).append(r)
    print("\nspans by row (us; the launch's events in brackets):")
    for row, rs in sorted(rows.items()):
        print(f"  row {row}: " + " ".join(f"{r['span'] / 1e3:.1f} ({r['event']:.1f})" for r in rs))
    # Whether the same blocks end last in every launch (a property of the block and its tiles) or
    # different ones (placement, timing): Pearson r of the block end times between launch pairs.
    rs = []
    for i, a in enumerate(summary):
        for b in summary[i + 1:]:
            keys = sorted(set(a["ends"]) & set(b["ends"]))
            if len(keys) < 3:
                continue
            try:
                rs.append(statistics.correlation([a["ends"][k] for k in keys], [b["ends"][k] for k in keys]))
            except statistics.StatisticsError:  # every block of a launch ended at once
                pass
    if rs:
        print(f"\nblock end times between launches: r median {med(rs):.2f} (min {min(rs):.2f}, max {max(rs):.2f}) over "
              f"{len(rs)} pairs")
    if len(summary) >= 3:
        summary.sort(key=lambda r: r["span"])
        k = max(1, len(summary) // 3)
        fast, slow = summary[:k], summary[-k:]
        print(f"\n{len(summary)} launches; fastest third against slowest third (means):")
        for key, name in [("span", "span (us)"), ("end_med", "median block end (us)"), ("end_min", "first block end (us)"),
                          ("main", "median unit main loop (us)"), ("main_max", "longest unit main loop (us)"),
                          ("kw", "median K-tile wait per unit (us)"), ("start_max", "latest block entry (us)"),
                          ("ghz", "SM clock (GHz)"), ("idle", "SMs idle after their block's end (%)")]:
            f = statistics.mean(r[key] for r in fast)
            s_ = statistics.mean(r[key] for r in slow)
            scale = 1 if key == "ghz" else 0.01 if key == "idle" else 1e3
            print(f"  {name:<36} {f / scale:10.2f} {s_ / scale:10.2f}  {s_ / f if f else 0:6.3f}")


def report(lines):
    pat = re.compile(r"probe L=(\d+) blk=(\d+) c=(\d+) sm=(\d+) units=(\d+) g0=(\d+) g1=(\d+) clk=(\d+) "
                     r"ready=(-?\d+) first=(-?\d+) main=(-?\d+) epi=(-?\d+)")
    rows = [tuple(int(x) for x in m.groups()) for m in map(pat.search, lines) if m]
    if not rows:
        sys.exit("report: no probe lines")
    by_launch = {}
    for r in rows:
        by_launch.setdefault(r[0], []).append(r)
    for launch, rs in sorted(by_launch.items()):
        g_first = min(r[5] for r in rs)
        g_last = max(r[6] for r in rs)
        # Cycles per ns from the consumers' own spans (globaltimer and clock64 over the same interval).
        ghz = statistics.median(r[7] / (r[6] - r[5]) for r in rs if r[6] > r[5])
        print(f"launch {launch}: {len(rs)} consumers, {len({r[1] for r in rs})} blocks, first entry to last end "
              f"{(g_last - g_first) / 1e3:.2f} us, SM clock ~{ghz:.2f} GHz")
        cols = {
            "start skew (entry after the first block's)": [r[5] - g_first for r in rs],
            "entry -> barriers ready": [r[8] / ghz for r in rs],
            "entry -> first K tile in": [r[9] / ghz for r in rs if r[9] >= 0],
            "entry -> last main loop end": [r[10] / ghz for r in rs if r[10] >= 0],
            "last main loop end -> epilogue end": [(r[11] - r[10]) / ghz for r in rs if r[10] >= 0],
            "entry -> consumer done": [r[11] / ghz for r in rs],
        }
        print(f"  {'ns':<44} {'min':>8} {'median':>8} {'max':>8}")
        for name, v in cols.items():
            if v:
                print(f"  {name:<44} {min(v):>8.0f} {statistics.median(v):>8.0f} {max(v):>8.0f}")
        units = [r[4] for r in rs]
        print(f"  units per consumer: min {min(units)}, max {max(units)}")


def main(argv):
    if len(argv) >= 3 and argv[0] == "instrument":
        launch = int(argv[argv.index("--launch") + 1]) if "--launch" in argv else 60
        with open(argv[1]) as f:
            out = instrument(f.read(), launch)
        with open(argv[2], "w") as f:
            f.write(out)
        return 0
    if len(argv) == 3 and argv[0] == "instrument-tiles":
        with open(argv[1]) as f:
            out = instrument_tiles(f.read())
        with open(argv[2], "w") as f:
            f.write(out)
        return 0
    if len(argv) == 2 and argv[0] == "report-tiles":
        with open(argv[1]) as f:
            report_tiles(f.readlines())
        return 0
    if len(argv) == 2 and argv[0] == "report":
        with open(argv[1]) as f:
            report(f.readlines())
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

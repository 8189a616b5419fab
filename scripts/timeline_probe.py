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
  report LOG
      Reads those lines: per consumer the start skew (its block's entry after the first block's,
      ns), and the cycles from entry to barriers ready, to its first K tile, to the end of its
      main loop and of its epilogue, converted to ns with the clock the lines themselves show;
      prints the distribution (min / median / max over consumers) of each.
"""
import re
import statistics
import sys

PRINT = ("probe L=%u blk=%d c=%d sm=%u units=%d g0=%llu g1=%llu clk=%llu ready=%lld first=%lld "
         "main=%lld epi=%lld\\n")


def instrument(src, launch):
    k = src.index("wgmma_tma_kernel(const __grid_constant__")
    head, body = src[:k], src[k:]

    def once(text, old, new):
        assert text.count(old) >= 1, f"anchor not found: {old!r}"
        return text.replace(old, new, 1)

    head = once(head, "namespace i8g {", "namespace i8g {\n__device__ unsigned i8g_probe_ticket;\n"
                "__device__ __forceinline__ unsigned long long i8g_gtime() { unsigned long long t; "
                "asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t)); return t; }\n"
                "__device__ __forceinline__ unsigned i8g_smid() { unsigned s; "
                "asm volatile(\"mov.u32 %0, %%smid;\" : \"=r\"(s)); return s; }\n")
    body = once(body, "  const unsigned base = (smem_addr(smem)",
                "  const unsigned long long p_g0 = i8g_gtime();\n"
                "  const long long p_c0 = clock64();\n"
                "  const unsigned base = (smem_addr(smem)")
    body = once(body, "  grid_order();\n", "  grid_order();\n  const long long p_ready = clock64() - p_c0;\n")
    body = once(body, "  const int c = role - 1;  // consumer index\n",
                "  const int c = role - 1;  // consumer index\n"
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
    return head + body


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
    if len(argv) == 2 and argv[0] == "report":
        with open(argv[1]) as f:
            report(f.readlines())
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

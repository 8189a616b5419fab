#!/usr/bin/env python3
"""Experimental edits of a kernel's inline source, for timing through
I8GEMM_SOURCE_OVERRIDE_DIR (a diagnostic: what wins here moves into the generator and templates).

  source_variant.py IN.cu OUT.cu EDIT[,EDIT...]

IN is `i8gemm inspect source NAME --inline`. Edits of wgmma_tma kernels:
  pre160 the epilogue's column operands loaded before the main loop wherever they and the
         accumulators fit 160 registers (the rule: 128), e.g. ping-pong 128x128 (128 + 32).
  epi1   where they are not preloaded, the register-store epilogue requests every column operand
         at its start (one round trip to L2) instead of chunk by chunk behind its own stores.
  krot   the producer walks each unit's K tiles from a rotated start: unit (tm, tn) begins at K
         tile ((tm + tn) % 8) * n / 8 of its n and wraps around. The consumers take the stages as
         they come: int32 sums are exact in any order, so the result is the same bits. Units
         that share a w tile (one column, consecutive rows in a group) or an x tile then read
         different K tiles at the same moment instead of the same lines. Only without K pairs
         (the name's bk128 tiles: KP = 1).
  cs     the register-store epilogue's interior stores are st.global.cs (evict first: the output
         is written once, so its lines should not push operands out of L2).
  lock   the producers of the units that share an operand tile in a group (GROUP_M consecutive
         units: one w tile where M >= N, one x tile where M < N) meet before each unit's loads:
         each adds 1 to its set's counter in a module global and waits until the set's round is
         complete or 3000 cycles have passed (never a deadlock; the counters carry on from
         launch to launch, rounds staying aligned while every launch has the same M). Session
         38 saw the slow mode follow how many readers of a tile are in phase; this holds them
         together at each unit's start. Static schedules without clusters or splits only.
  nohint the mbarrier waits carry no suspend-time hint (mbarrier.try_wait.parity without its
         time operand). With it ptxas puts a NANOSLEEP.SYNCS of 10 ms in every retry of a wait
         (session 40's SASS); a TMA stream ran 0-10% faster without it (session 27), the GEMM
         A/B never ran. Any kernel whose source has tma.cuh's waits (wgmma_tma).
  l2n    every TMA load of x and w carries an L2 cache hint with the policy word CUTLASS passes
         by default (CacheHintSm90::EVICT_NORMAL, 0x1000000000000000): its sm90 GEMMs' SASS
         has UTMALDG ... desc[UR] where ours has none (session 40).
Edits of decode_mma kernels (issue 13: at M = 16 every block of 28672 x 4096 reads all of x again,
as many bytes as the weight, session 36):
  xca    the shared ring's x copies are cp.async.ca (allocated in L1, where the next blocks on
         the SM find them) instead of .cg (L2 only); the weight's stay .cg.
  xl1    the register ring's x loads carry L1::evict_last (kept in L1 over the weight, which is
         not allocated there).
  nox    NOT EXACT, timing only (bench/i8gemm_timeline, which does not check results; the tuner
         rejects it): no x bytes are read at all (the shared ring's x rows keep whatever the
         slots held, the register ring's x fragments are zeros). Bounds what any way of not
         re-reading x (L1, a resident copy, a multicast) could gain.
  nostore NOT EXACT, timing only (as nox): the epilogue computes every output but stores none
         (its store is taken only for an int32 sum no int8 product of this size reaches). Bounds
         what the output's stores cost the stream (session 40: the same kernel at M = 16 ran
         1.05-1.06x its time at M = 1, and nox did not close that).
  wef    the shared ring's weight copies carry an L2 evict_first policy (each weight byte is read
         once, so its lines should leave L2 before anything else: the output's in particular).
         A register-ring kernel is compiled from the same template and is unchanged by it.
  (wgmma_tma, the register-store epilogue)
  wol    bf16 outputs (an interior tile's quads, an edge tile's pairs) are stored with the L2 evict_last policy decode_mma
         stores its outputs with (session 41), for M = 32...128 where the weight still streams.
  oplain the outputs are stored without the L2 evict_last policy the template gives them (as
         before session 41, when that policy made 28672 x 4096 M = 16 1.04x faster on an H100):
         the A/B of that choice.
Edits of mma_sync kernels:
  mol    the outputs are stored with the L2 evict_last policy decode_mma stores its outputs with
         (session 41): mma_sync's bm16 tiles win 28672 x 4096 at M = 1 and finish beside
         decode_mma at M = 16, the one M <= 16 point left below cuBLASLt fp8 (session 42).
"""
import sys


def once(text, old, new, start=0):
    i = text.find(old, start)
    assert i >= 0, f"anchor not found: {old!r}"
    return text[:i] + new + text[i + len(old):]


# The wgmma_tma kernel's definition; a source is split there into what precedes it (the inlined
# templates, where globals go) and the kernel itself.
KERNEL = "wgmma_tma_kernel(const __grid_constant__"
# The consumers' code starts here (everything before it in the kernel: setup and the producer).
CONSUMERS = "  const int c = role - 1;  // consumer index\n"


def split_kernel(src):
    k = src.index(KERNEL)
    return src[:k], src[k:]


def krot(src):
    head, body = split_kernel(src)
    p = body.index("const int next = DS ?")  # the producer's unit loop
    body = once(body, "      const int tm = w.tm, tn = w.tn;\n",
                "      const int tm = w.tm, tn = w.tn;\n"
                "      static_assert(KP == 1, \"krot: no K pairs\");\n"
                "      const int p_rot = ((tm + tn) % 8) * (w.n / 8);\n"
                "      auto p_k = [&](int k) { return w.k0 + (k - w.k0 + p_rot) % w.n; };\n", p)
    q = body.index("const int p_rot")
    end = body.index("      u = next;\n", q)
    seg = body[q:end]
    n = seg.count("(kt + j) * BK")
    assert n >= 4, f"krot: {n} K coordinates in the producer"
    seg = seg.replace("(kt + j) * BK", "p_k(kt + j) * BK")
    return head + body[:q] + seg + body[end:]


def cs(src):
    old = "      *reinterpret_cast<uint2*>(rowp[i][h] + 16 * j) = odd ? make_uint2(got, p1) : make_uint2(p0, got);\n"
    new = ("      {\n        const uint2 v = odd ? make_uint2(got, p1) : make_uint2(p0, got);\n"
           "        asm volatile(\"st.global.cs.v2.u32 [%0], {%1, %2};\" :: \"l\"(rowp[i][h] + 16 * j), \"r\"(v.x), "
           "\"r\"(v.y) : \"memory\");\n      }\n")
    return once(src, old, new)


def lock(src):
    head, body = split_kernel(src)
    head = once(head, "namespace i8g {", "namespace i8g {\n__device__ unsigned i8g_lock[8192];\n")
    p = body.index("const int next = DS ?")  # the producer's unit loop
    body = once(body, "      const int tm = w.tm, tn = w.tn;\n",
                "      const int tm = w.tm, tn = w.tn;\n"
                "      static_assert(CM == 1 && SPLIT_K == 1 && CK == 1 && DS == 0, \"lock: static schedules of tiles\");\n"
                "      {\n"
                "        const int l_grouped = along_n ? tiles_n : tiles_m, l_walked = along_n ? tiles_m : tiles_n;\n"
                "        const int l_g = (along_n ? tn : tm) / GROUP_M;\n"
                "        const unsigned l_members = unsigned(min(GROUP_M, l_grouped - l_g * GROUP_M));\n"
                "        const int l_set = l_g * l_walked + (along_n ? tm : tn);\n"
                "        if (l_set < 8192) {\n"
                "          unsigned* l_cnt = i8g_lock + l_set;\n"
                "          const unsigned l_old = atomicAdd(l_cnt, 1u);\n"
                "          const unsigned l_target = (l_old / l_members + 1u) * l_members;\n"
                "          const long long l_t0 = clock64();\n"
                "          for (;;) {\n"
                "            unsigned l_v;\n"
                "            asm volatile(\"ld.relaxed.gpu.global.u32 %0, [%1];\" : \"=r\"(l_v) : \"l\"(l_cnt) : \"memory\");\n"
                "            if (int(l_v - l_target) >= 0 || clock64() - l_t0 > 3000) break;\n"
                "          }\n"
                "        }\n"
                "      }\n", p)
    return head + body


def xca(src):
    old = "          cp_async_16(dst + dec::ring_offset(row, unit, BK), args.x + min(m, M - 1) * K + kb, k_in && m < M);\n"
    new = ("          asm volatile(\"cp.async.ca.shared.global [%0], [%1], 16, %2;\\n\" ::\"r\"(dst + dec::ring_offset(row, unit, BK)),"
           " \"l\"(args.x + min(m, M - 1) * K + kb), \"r\"(k_in && m < M ? 16 : 0) : \"memory\");\n")
    return once(src, old, new)


def xl1(src):
    old = '  asm volatile("ld.global.nc.v4.s32 {%0, %1, %2, %3}, [%4];\\n"'
    new = '  asm volatile("ld.global.nc.L1::evict_last.v4.s32 {%0, %1, %2, %3}, [%4];\\n"'
    return once(src, old, new, src.index("__device__ __forceinline__ int4 load_act("))


def nox(src):
    old = "          cp_async_16(dst + dec::ring_offset(row, unit, BK), args.x + min(m, M - 1) * K + kb, k_in && m < M);\n"
    src = once(src, old, "          (void)m;  // nox: no x copy\n", src.index("const long long m = m0 + row - BN;"))
    old = "          c.x[j][u] = in ? dec::load_act(xrow[j] + kb + dec::kStep * u) : make_int4(0, 0, 0, 0);\n"
    return once(src, old, "          c.x[j][u] = make_int4(0, 0, 0, 0);  // nox: no x load\n")


# The decode epilogue's one output store, and an L2 policy register made at the top of a block.
DECODE_FINISH = ("finish_l2<OUT, BIAS, ASYM>(args.out, m * N + n + e, sum[4 * v + e], e_sx[v], zp, e_sw[v][e], b[e], "
                 "colsum[e],\n                                 out_policy);\n")


def policy(indent, var, kind, why):
    return (f"{indent}unsigned long long {var};  // {why}\n"
            f"{indent}asm volatile(\"createpolicy.fractional.L2::{kind}.b64 %0, 1.0;\\n\" : \"=l\"({var}));\n")


def nostore(src):
    new = ("      if (sum[4 * v + e] == 0x7fffffff)  // nostore: never true (|sum| <= 16384 * K)\n"
           "        " + DECODE_FINISH)
    return once(src, "      " + DECODE_FINISH, new, src.index("decode_mma_kernel("))


def wef(src):
    start = src.index("decode_mma_kernel(")
    issue = "    auto issue = [&](int slot, int i) {\n"
    src = once(src, issue, policy("    ", "wpol", "evict_first", "wef: the weight's lines first out of L2") + issue, start)
    old = ("          cp_async_16<true>(dst + dec::ring_offset(row, unit, BK), args.w + (N_WHOLE ? n : min(n, N - 1)) * K + kb,\n"
           "                             k_in);\n")
    new = ("          asm volatile(\"cp.async.cg.shared.global.L2::cache_hint.L2::256B [%0], [%1], 16, %2, %3;\\n\" ::\"r\"(\n"
           "                           dst + dec::ring_offset(row, unit, BK)), \"l\"(args.w + (N_WHOLE ? n : min(n, N - 1)) * K + kb),\n"
           "                       \"r\"(k_in ? 16 : 0), \"l\"(wpol) : \"memory\");  // wef\n")
    return once(src, old, new, start)


def oplain(src):
    plain = ("finish<OUT, BIAS, ASYM>(args.out, m * N + n + e, sum[4 * v + e], e_sx[v], zp, e_sw[v][e], b[e], "
             "colsum[e]);  // oplain\n")
    return once(src, DECODE_FINISH, plain, src.index("decode_mma_kernel("))


def nohint(src):
    return once(src, '".shared::cta.b64 done, [%0], %1, %2;\\n"', '".shared::cta.b64 done, [%0], %1;\\n"')


def l2n(src):
    pol = '"l"(0x1000000000000000ull)'
    old = ('      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];\\n" ::"r"(\n'
           '          dst),\n'
           '      "l"(reinterpret_cast<unsigned long long>(map)), "r"(bar), "r"(inner), "r"(outer)\n')
    new = ('      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1, {%3, "\n'
           '      "%4}], [%2], %5;\\n" ::"r"(dst),  // l2n\n'
           '      "l"(reinterpret_cast<unsigned long long>(map)), "r"(bar), "r"(inner), "r"(outer), ' + pol + '\n')
    src = once(src, old, new)
    old = ('      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%3, "\n'
           '      "%4}], [%2], %5;\\n" ::"r"(dst),\n'
           '      "l"(reinterpret_cast<unsigned long long>(map)), "r"(bar), "r"(inner), "r"(outer), "h"(mask)\n')
    new = ('      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster.L2::cache_hint "\n'
           '      "[%0], [%1, {%3, %4}], [%2], %5, %6;\\n" ::"r"(dst),  // l2n\n'
           '      "l"(reinterpret_cast<unsigned long long>(map)), "r"(bar), "r"(inner), "r"(outer), "h"(mask), ' + pol + '\n')
    return once(src, old, new)


def wol(src):
    old = "      *reinterpret_cast<uint2*>(rowp[i][h] + 16 * j) = odd ? make_uint2(got, p1) : make_uint2(p0, got);\n"
    new = ("      const unsigned long long pol_ = l2_evict_last_policy();  // wol: the output kept in L2\n"
           "      const uint2 v_ = odd ? make_uint2(got, p1) : make_uint2(p0, got);\n"
           "      asm volatile(\"st.global.L2::cache_hint.v2.b32 [%0], {%1, %2}, %3;\\n\" ::\"l\"(rowp[i][h] + 16 * j), \"r\"(v_.x),\n"
           "                   \"r\"(v_.y), \"l\"(pol_) : \"memory\");\n")
    src = once(src, old, new)
    # An edge tile's pairs (M below the tile's rows: M = 32 with 64-row tiles) leave through store_out2.
    old = ("    static_cast<unsigned*>(out)[idx / 2] = unsigned(f32_to_bf16_rne(y0)) | (unsigned(f32_to_bf16_rne(y1)) << 16);\n")
    # (epilogue_common.h comes before epilogue.cuh's l2_evict_last_policy: the policy is made here)
    new = (policy("    ", "pol_", "evict_last", "wol") +
           "    asm volatile(\"st.global.L2::cache_hint.b32 [%0], %1, %2;\\n\" ::\"l\"(static_cast<unsigned*>(out) + idx / 2),\n"
           "                 \"r\"(unsigned(f32_to_bf16_rne(y0)) | (unsigned(f32_to_bf16_rne(y1)) << 16)), \"l\"(pol_) : \"memory\");\n")
    return once(src, old, new)


def mol(src):
    start = src.index("mma_sync_kernel(")
    loop = "#pragma unroll\n  for (int j0 = 0; j0 < NT; j0 += CH) {\n"
    src = once(src, loop, "  const unsigned long long mol_pol = l2_evict_last_policy();  // mol\n" + loop, start)
    old = ("              finish<OUT, BIAS, ASYM>(args.out, m * N + n, acc[i][j][2 * h + e], sx[i][h], zp[i][h], sw[jj][e],\n"
           "                                      b[jj][e], colsum[jj][e]);\n")
    new = ("              finish_l2<OUT, BIAS, ASYM>(args.out, m * N + n, acc[i][j][2 * h + e], sx[i][h], zp[i][h],\n"
           "                                         sw[jj][e], b[jj][e], colsum[jj][e], mol_pol);  // mol\n")
    return once(src, old, new, start)


# Timing-only bounds for wgmma_tma at small M (wrong products: the tuner rejects them, so
# gpu_variants.sh times them back to back only). xnone: no x bytes loaded (each stage expects its w
# bytes only); wns: the outputs computed but never stored.
def xnone(src):
    head, body = split_kernel(src)
    body = once(body, ": subs * (SUB_BYTES - (BM - X_ROWS) * BK));",
                ": subs * (SUB_BYTES - BM * BK));  // xnone: the w boxes only")
    body = once(body, "            tma::load_box(sbase + unsigned(j * X_STEP), &xmap, full(stage), (kt + j) * BK, x_row);\n",
                "            (void)x_row;  // xnone: no x box\n")
    return head + body


def wns(src):
    head, body = split_kernel(src)
    old = "    store_tile<MI, BN, PRE_EPI, WSC, OUT, BIAS, ASYM>(args, acc, ops, row0, (long long)tn * BN, M, N, t);\n"
    new = ("    if (acc[0][0] == 0x7fffffff)  // wns: never true (|sum| <= 16384 * K)\n"
           "      store_tile<MI, BN, PRE_EPI, WSC, OUT, BIAS, ASYM>(args, acc, ops, row0, (long long)tn * BN, M, N, t);\n")
    return head + once(body, old, new)


def pre160(src):
    """The epilogue's column operands loaded before the main loop up to 160 registers with the
    accumulators (the rule says 128), so that ping-pong 128x128 (128 + 32) preloads them too."""
    return once(src, "return MI * (BN / 2) + (BN / 4) * per_col <= 128;", "return MI * (BN / 2) + (BN / 4) * per_col <= 160;")


def epi1(src):
    """Where the column operands are not preloaded, the register-store epilogue requests all of
    them at its start (one round trip) instead of one chunk at a time behind the previous
    chunk's stores."""
    head, body = split_kernel(src)
    old = "    store_tile<MI, BN, PRE_EPI, WSC, OUT, BIAS, ASYM>(args, acc, ops, row0, (long long)tn * BN, M, N, t);\n"
    new = ("    if constexpr (!PRE_EPI) {\n"
           "      const auto all = load_epi_operands<MI, BN, true, ACT, WSC, OUT, BIAS, ASYM>(args, row0, (long long)tn * BN,\n"
           "                                                                                  M, N, t);\n"
           "      store_tile<MI, BN, true, WSC, OUT, BIAS, ASYM>(args, acc, all, row0, (long long)tn * BN, M, N, t);\n"
           "    } else {\n  " + old + "    }\n")
    return head + once(body, old, new)


EDITS = {"pre160": pre160, "epi1": epi1, "nohint": nohint, "l2n": l2n, "krot": krot, "cs": cs, "lock": lock, "xca": xca, "xl1": xl1, "nox": nox, "nostore": nostore, "wef": wef,
         "oplain": oplain, "wol": wol, "mol": mol, "xnone": xnone, "wns": wns}


def main(argv):
    if len(argv) != 3 or any(e not in EDITS for e in argv[2].split(",")):
        sys.stderr.write(__doc__)
        return 2
    with open(argv[0]) as f:
        src = f.read()
    for e in argv[2].split(","):
        try:
            src = EDITS[e](src)
        except (AssertionError, ValueError) as err:
            sys.stderr.write(f"source_variant: {e} does not apply to this source ({err}); give `i8gemm inspect source "
                             "NAME --inline` of a kernel of its family\n")
            return 2
    with open(argv[1], "w") as f:
        f.write(src)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

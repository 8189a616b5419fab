#!/usr/bin/env bash
# scripts/timeline_probe.py and scripts/source_variant.py, the diagnostics bench/i8gemm_timeline and
# scripts/gpu_variants.sh run on the GPU: their edits still find their anchors in this build's
# wgmma_tma source (ping-pong 128x128 with the register store and with the staged store), the
# edited kernels compile through I8GEMM_SOURCE_OVERRIDE_DIR without a printf or a stack frame
# (a call in the kernel makes ptxas serialize every wgmma, C7510), the report reads a fixture to
# the numbers it holds, and bad input gets a message and a non-zero status.
#   timeline_probe_check.sh I8GEMM   (the built CLI)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
i8gemm="$1"
tp="$root/scripts/timeline_probe.py"
sv="$root/scripts/source_variant.py"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "timeline_probe_check: FAIL: $*" >&2; exit 1; }

pre=i8g_sm90a_wgmma_tma_n4096_k4096_nk_tok_ch_bf16_bm128_bn128_bk128_wg2
for tail in _s7_sc2_sk1 _s5_sc2_sk1_es1; do
  name=$pre$tail
  "$i8gemm" inspect source "$name" --inline -o "$tmp/plain.cu" >/dev/null
  mkdir -p "$tmp/ovr$tail"
  python3 "$sv" "$tmp/plain.cu" "$tmp/v.cu" nohint,l2n,krot,cs,lock || fail "source_variant nohint,l2n,krot,cs,lock on $name"
  [ "$(grep -c '// l2n$' "$tmp/v.cu")" = 2 ] || fail "l2n: not both TMA loads hinted"
  [ "$(grep -c '"l"(0x1000000000000000ull)' "$tmp/v.cu")" = 2 ] || fail "l2n: not CUTLASS's EVICT_NORMAL word"
  ! grep -q 'done, \[%0\], %1, %2;' "$tmp/v.cu" || fail "nohint: a wait keeps its suspend-time hint"
  [ "$(grep -c 'p_k(kt + j) \* BK' "$tmp/v.cu")" = 6 ] || fail "krot: not every producer load's K coordinate rotated"
  grep -q 'st.global.cs.v2.u32' "$tmp/v.cu" || fail "cs: no streaming store"
  [ "$(grep -c 'atomicAdd(l_cnt, 1u)' "$tmp/v.cu")" = 1 ] || fail "lock: not one meeting in the producer"
  python3 "$tp" instrument-tiles "$tmp/v.cu" "$tmp/ovr$tail/$name.cu" || fail "instrument-tiles on $name"
  grep -q 'extern "C" __device__ long long i8g_probe\[' "$tmp/ovr$tail/$name.cu" || fail "no i8g_probe"
  [ "$(grep -c 'p_row\[p_n \* 8 + 7\]' "$tmp/ovr$tail/$name.cu")" -ge 1 ] || fail "no epilogue stamp"
  [ "$(grep -c printf "$tmp/ovr$tail/$name.cu" || true)" = "$(grep -c printf "$tmp/plain.cu" || true)" ] ||
    fail "the stamps print"
  flags=()
  [ "$tail" = _s5_sc2_sk1_es1 ] && flags=(--experimental-staged-store)
  I8GEMM_SOURCE_OVERRIDE_DIR="$tmp/ovr$tail" "$i8gemm" tune --compile-only --arch sm_90a --shape 4096x4096 --m 4096 \
    "${flags[@]}" --filter "$tail\$" --cache "$tmp/c.sqlite" >"$tmp/tune.log" 2>&1 || { cat "$tmp/tune.log"; fail "compile"; }
  "$i8gemm" inspect show "$name" --cache "$tmp/c.sqlite" >"$tmp/show.txt" 2>&1 || fail "inspect show $name"
  grep -q "override" "$tmp/show.txt" || fail "$name was not compiled from the override"
  ! grep -q "C7510" "$tmp/show.txt" || fail "$name: ptxas serializes its wgmma"
  grep -Eq "stack frame +0 B" "$tmp/show.txt" || { grep "stack frame" "$tmp/show.txt"; fail "$name: a stack frame"; }
done

# wol (bf16 outputs stored evict_last): both of the register-store epilogue's stores take the
# policy, and the kernel compiles from the override.
name=${pre}_s7_sc2_sk1
"$i8gemm" inspect source "$name" --inline -o "$tmp/plain.cu" >/dev/null
mkdir -p "$tmp/wol"
python3 "$sv" "$tmp/plain.cu" "$tmp/wol/$name.cu" wol || fail "source_variant wol on $name"
[ "$(grep -c 'L2::cache_hint.v2.b32\|L2::cache_hint.b32' "$tmp/wol/$name.cu")" -ge 2 ] || fail "wol: not both stores hinted"
I8GEMM_SOURCE_OVERRIDE_DIR="$tmp/wol" "$i8gemm" tune --compile-only --arch sm_90a --shape 4096x4096 --m 4096 \
  --filter "_s7_sc2_sk1\$" --cache "$tmp/c.sqlite" >"$tmp/tune.log" 2>&1 || { cat "$tmp/tune.log"; fail "compile wol"; }
"$i8gemm" inspect show "$name" --cache "$tmp/c.sqlite" >"$tmp/show.txt" 2>&1 || fail "inspect show $name (wol)"
grep -q "override" "$tmp/show.txt" || fail "wol: not from the override"
rm -f "$tmp/c.sqlite"

# The decode edits on the shared-ring and the register-ring decode kernels: x's copies and loads
# change, the weight's do not, and the kernels compile.
dpre=i8g_sm90a_decode_mma_n28672_k4096_nk_tok_ch_bf16
# compile_override DIR TAIL NAME WHAT: NAME (of 28672x4096, its name ending TAIL) compiles from DIR's source.
compile_override() {
  I8GEMM_SOURCE_OVERRIDE_DIR="$1" "$i8gemm" tune --compile-only --arch sm_90a --shape 28672x4096 --m 16 \
    --filter "$2\$" --cache "$tmp/d.sqlite" >"$tmp/tune.log" 2>&1 || { cat "$tmp/tune.log"; fail "compile $4"; }
  "$i8gemm" inspect show "$3" --cache "$tmp/d.sqlite" >"$tmp/show.txt" 2>&1 || fail "inspect show $3 ($4)"
  grep -q "override" "$tmp/show.txt" || fail "$4: $3 not from the override"
  rm -f "$tmp/d.sqlite"
}
for tail in _bm16_bn16_bk128_wk8_s2_sk1_sc1 _bm8_bn64_bk64_wk4_s2_sk1; do
  name=$dpre$tail
  "$i8gemm" inspect source "$name" --inline -o "$tmp/dplain.cu" >/dev/null
  mkdir -p "$tmp/dovr$tail"
  python3 "$sv" "$tmp/dplain.cu" "$tmp/dovr$tail/$name.cu" xca,xl1 || fail "source_variant xca,xl1 on $name"
  [ "$(grep -c 'cp.async.ca.shared.global' "$tmp/dovr$tail/$name.cu")" = 1 ] || fail "xca: not the one x copy"
  [ "$(grep -c 'L1::evict_last' "$tmp/dovr$tail/$name.cu")" = 1 ] || fail "xl1: not the one x load"
  [ "$(grep -c 'L1::no_allocate.L2::256B' "$tmp/dovr$tail/$name.cu")" = "$(grep -c 'L1::no_allocate.L2::256B' "$tmp/dplain.cu")" ] ||
    fail "the weight's loads changed"
  compile_override "$tmp/dovr$tail" "$tail" "$name" xca,xl1
  # nox (timing only): neither x copy nor x load is left, the weight's are untouched.
  python3 "$sv" "$tmp/dplain.cu" "$tmp/nox.cu" nox || fail "source_variant nox on $name"
  ! grep -q 'args.x + min(m, M - 1) \* K + kb' "$tmp/nox.cu" || fail "nox: an x copy is left"
  ! grep -q 'dec::load_act(xrow' "$tmp/nox.cu" || fail "nox: an x load is left"
  [ "$(grep -c 'cp_async_16<true>' "$tmp/nox.cu")" = "$(grep -c 'cp_async_16<true>' "$tmp/dplain.cu")" ] ||
    fail "nox: the weight's copies changed"
  # nostore (timing only): the one output store is guarded by a sum no int8 product reaches.
  python3 "$sv" "$tmp/dplain.cu" "$tmp/nostore.cu" nostore || fail "source_variant nostore on $name"
  [ "$(grep -c '== 0x7fffffff)  // nostore' "$tmp/nostore.cu")" = 1 ] || fail "nostore: not the one store"
  [ "$(grep -c 'finish_l2<OUT, BIAS, ASYM>(args.out' "$tmp/nostore.cu")" = 1 ] || fail "nostore: the epilogue changed"
  # The template stores the outputs with the evict_last policy (the register ring too); oplain
  # takes it off the one store, and only there.
  [ "$(grep -c 'finish_l2<OUT, BIAS, ASYM>(args.out' "$tmp/dplain.cu")" = 1 ] || fail "$name: not one policy store"
  grep -q 'out_policy = l2_evict_last_policy()' "$tmp/dplain.cu" || fail "$name: no evict_last policy"
  python3 "$sv" "$tmp/dplain.cu" "$tmp/oplain.cu" oplain || fail "source_variant oplain on $name"
  ! grep -q 'finish_l2<OUT, BIAS, ASYM>(args.out' "$tmp/oplain.cu" || fail "oplain: a policy store is left"
  [ "$(grep -c '// oplain' "$tmp/oplain.cu")" = 1 ] || fail "oplain: not the one output store"
done
# wef (the shared ring only): every weight copy carries the evict_first policy, x's copies none;
# with oplain beside it the kernel compiles and comes from the override.
name=$dpre"_bm16_bn16_bk128_wk8_s2_sk1_sc1"
"$i8gemm" inspect source "$name" --inline -o "$tmp/dplain.cu" >/dev/null
mkdir -p "$tmp/wovr"
python3 "$sv" "$tmp/dplain.cu" "$tmp/wovr/$name.cu" wef,oplain || fail "source_variant wef,oplain on $name"
! grep -q 'cp_async_16<true>' "$tmp/wovr/$name.cu" || fail "wef: a weight copy without the policy is left"
[ "$(grep -c 'L2::cache_hint.L2::256B' "$tmp/wovr/$name.cu")" = 1 ] || fail "wef: not the one weight copy"
grep -q 'args.x + min(m, M - 1) \* K + kb, k_in && m < M);' "$tmp/wovr/$name.cu" || fail "wef: x's copy changed"
compile_override "$tmp/wovr" _bm16_bn16_bk128_wk8_s2_sk1_sc1 "$name" wef,oplain
if python3 "$sv" "$tmp/dplain.cu" "$tmp/x.cu" krot 2>"$tmp/err"; then fail "krot applied to a decode kernel"; fi
grep -q "does not apply" "$tmp/err" || { cat "$tmp/err"; fail "no message for an edit of another family"; }
# mol (mma_sync's outputs stored evict_last): the one output store takes the policy, made once
# before the epilogue's loop; the kernel compiles through the override; a decode source is refused.
name=i8g_sm90a_mma_sync_n28672_k4096_nk_tok_ch_bf16_bm16_bn32_bk128_wm1_wn2_s4_sk1
"$i8gemm" inspect source "$name" --inline -o "$tmp/mplain.cu" >/dev/null
mkdir -p "$tmp/movr"
python3 "$sv" "$tmp/mplain.cu" "$tmp/movr/$name.cu" mol || fail "source_variant mol on $name"
! grep -q 'finish<OUT, BIAS, ASYM>(args.out' "$tmp/movr/$name.cu" || fail "mol: a plain output store is left"
[ "$(grep -c 'mol_pol' "$tmp/movr/$name.cu")" = 2 ] || fail "mol: the policy is not made once and used once"
compile_override "$tmp/movr" _bm16_bn32_bk128_wm1_wn2_s4_sk1 "$name" mol
if python3 "$sv" "$tmp/dplain.cu" "$tmp/x.cu" mol 2>"$tmp/err"; then fail "mol applied to a decode kernel"; fi
grep -q "does not apply" "$tmp/err" || { cat "$tmp/err"; fail "mol: no message for a decode source"; }
# xnone and wns (timing-only bounds for wgmma_tma at small M): no x box is loaded and each stage
# expects the w bytes only; the one output store is guarded by a sum no int8 product reaches; both
# compile through the override; a decode source is refused.
name=i8g_sm90a_wgmma_tma_n28672_k4096_nk_tok_ch_bf16_bm64_bn48_bk256_wg2_s8_sc2_sk1
"$i8gemm" inspect source "$name" --inline -o "$tmp/wplain.cu" >/dev/null
mkdir -p "$tmp/xovr"
python3 "$sv" "$tmp/wplain.cu" "$tmp/xovr/$name.cu" xnone,wns || fail "source_variant xnone,wns on $name"
! grep -q 'tma::load_box(sbase + unsigned(j \* X_STEP), &xmap' "$tmp/xovr/$name.cu" || fail "xnone: an x box is left"
grep -q 'subs \* (SUB_BYTES - BM \* BK));  // xnone' "$tmp/xovr/$name.cu" || fail "xnone: a stage still expects x bytes"
[ "$(grep -c '== 0x7fffffff)  // wns' "$tmp/xovr/$name.cu")" = 1 ] || fail "wns: not the one store"
compile_override "$tmp/xovr" _bm64_bn48_bk256_wg2_s8_sc2_sk1 "$name" xnone,wns
if python3 "$sv" "$tmp/dplain.cu" "$tmp/x.cu" xnone 2>"$tmp/err"; then fail "xnone applied to a decode kernel"; fi
grep -q "does not apply" "$tmp/err" || { cat "$tmp/err"; fail "xnone: no message for a decode source"; }

# The report on two launches of two blocks (ns = cycles / 2: the clock is 2 GHz by their spans).
cat >"$tmp/log" <<'EOF'
launch L=0 row=0 event_us=12.00
tile L=0 b=0 c=0 sm=3 j=0 tm=0 tn=0 s=0 w=100 f=200 kw=2000 m=10100 e=12100
cons L=0 b=0 c=0 sm=3 n=1 g0=1000000 g1=1006050 clk=12100
tile L=0 b=1 c=0 sm=5 j=0 tm=1 tn=0 s=0 w=100 f=200 kw=4000 m=16100 e=18100
cons L=0 b=1 c=0 sm=5 n=1 g0=1001000 g1=1010100 clk=18200
launch L=1 row=1 event_us=8.00
tile L=1 b=0 c=0 sm=3 j=0 tm=0 tn=0 s=0 w=100 f=200 kw=0 m=10100 e=11900
cons L=1 b=0 c=0 sm=3 n=1 g0=2000000 g1=2006000 clk=12000
tile L=1 b=1 c=0 sm=5 j=0 tm=1 tn=0 s=0 w=100 f=200 kw=0 m=10100 e=11900
cons L=1 b=1 c=0 sm=5 n=1 g0=2000000 g1=2006000 clk=12000
EOF
python3 "$tp" report-tiles "$tmp/log" >"$tmp/report.txt" || fail "report-tiles"
grep -q "launch 0 (row 0, event 12.0 us): 2 blocks, 2 units, span 10.1 us, SM ~2.00 GHz" "$tmp/report.txt" ||
  { cat "$tmp/report.txt"; fail "launch 0's span: block 1 enters 1 us late and runs 9.1 us"; }
grep -q "(SMs idle after their block's end 20.0%)" "$tmp/report.txt" ||
  { cat "$tmp/report.txt"; fail "launch 0's idle share: blocks end at 6.05 and 10.1 us of 10.1"; }
grep -q "main loop median 6.50" "$tmp/report.txt" || { cat "$tmp/report.txt"; fail "launch 0's main loops: 5 and 8 us"; }
grep -q "row 1: 6.0 (8.0)" "$tmp/report.txt" || { cat "$tmp/report.txt"; fail "spans by row"; }

# Bad input.
if python3 "$sv" "$tmp/plain.cu" "$tmp/x.cu" nosuch 2>"$tmp/err"; then fail "an unknown edit was accepted"; fi
grep -q "Edits of" "$tmp/err" || fail "an unknown edit: no usage"
echo "int main() {}" >"$tmp/other.cu"
if python3 "$tp" instrument-tiles "$tmp/other.cu" "$tmp/x.cu" 2>"$tmp/err"; then fail "a source without the kernel was stamped"; fi
grep -q "wgmma_tma_kernel" "$tmp/err" || { cat "$tmp/err"; fail "no message for a source without the kernel"; }
if python3 "$tp" report-tiles /dev/null 2>"$tmp/err"; then fail "an empty log was reported"; fi
grep -q "no cons lines" "$tmp/err" || fail "no message for an empty log"
echo "timeline_probe_check: ok"

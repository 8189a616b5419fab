#!/usr/bin/env bash
# The timing flags' bad input, before any GPU work: i8gemm_timeline's --sequence names a step it
# does not have, `i8gemm bench --warmup-ms` or `i8gemm tune --final-warmup-ms` a negative time. Each gets a message that says what is
# wrong and a non-zero status (i8gemm_timeline's --warmup-ms too); a good step list and warm-up pass the check (they then fail later,
# without a GPU, on the device, which is not what is checked here).
#   timing_flags_check.sh I8GEMM I8GEMM_TIMELINE
set -uo pipefail
i8gemm="$1"
timeline="$2"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "timing_flags_check: FAIL: $*" >&2; exit 1; }
k=i8g_sm90a_wgmma_tma_n4096_k4096_nk_tok_ch_bf16_bm128_bn128_bk128_wg2_s7_sc2_sk1

"$timeline" --kernel $k --m 16 --cache "$tmp/c.sqlite" --placements --sequence gqXg -o "$tmp/t.txt" >"$tmp/o" 2>&1
rc=$?
[ $rc = 1 ] || fail "an unknown step: status $rc, not 1"
grep -q "'X' is not a step" "$tmp/o" || { cat "$tmp/o"; fail "an unknown step: no message naming it"; }
"$timeline" --kernel $k --m 16 --cache "$tmp/c.sqlite" --placements --sequence gqpPwgez1m -o "$tmp/t.txt" >"$tmp/o" 2>&1
! grep -q "is not a step" "$tmp/o" || { cat "$tmp/o"; fail "every step refused"; }

"$timeline" --kernel $k --m 16 --cache "$tmp/c.sqlite" --placements --warmup-ms -5 -o "$tmp/t.txt" >"$tmp/o" 2>&1
rc=$?
[ $rc != 0 ] || fail "i8gemm_timeline --warmup-ms -5 passed"
grep -q "warmup-ms" "$tmp/o" || { cat "$tmp/o"; fail "i8gemm_timeline --warmup-ms -5: no message naming the flag"; }

"$i8gemm" bench --shape 4096x4096 --m 16 --warmup-ms -5 --cache "$tmp/c.sqlite" >"$tmp/o" 2>&1
rc=$?
[ $rc != 0 ] || fail "bench --warmup-ms -5 passed"
grep -q "warmup-ms" "$tmp/o" || { cat "$tmp/o"; fail "bench --warmup-ms -5: no message naming the flag"; }
[ ! -e "$tmp/c.sqlite" ] || fail "bench --warmup-ms -5 made a cache"

"$i8gemm" tune --shape 4096x4096 --m 16 --final-warmup-ms -1 --cache "$tmp/c.sqlite" >"$tmp/o" 2>&1
rc=$?
[ $rc != 0 ] || fail "tune --final-warmup-ms -1 passed"
grep -q "final-warmup-ms" "$tmp/o" || { cat "$tmp/o"; fail "tune --final-warmup-ms -1: no message naming the flag"; }
[ ! -e "$tmp/c.sqlite" ] || fail "tune --final-warmup-ms -1 made a cache"
echo "timing_flags_check: ok"

#!/usr/bin/env bash
# Runs scripts/packed_report.py on a hand-made `inspect race --json` document: per bucket the
# fastest packed twin against the fastest plain kernel of its tile (any ring depth) and the
# fastest plain kernel of any family; a bucket without a timed packed twin is reported and fails.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "packed_report_check: FAIL: $*" >&2; exit 1; }
k=i8g_sm90a_wgmma_tma_n2560_k4096_nk_tok_ch_bf16
cat > "$tmp/race.json" <<JSON
{"schema": "i8gemm/inspect-race", "buckets": [
 {"problem": "n2560_k4096_nk_tok_ch_bf16", "m_bucket": 32, "winner": "${k}_bm64_bn48_bk128_wg2_s16_sc2_sk1",
  "candidates": [
   {"candidate": "${k}_bm64_bn48_bk256_wg2_s8_sc2_sk1_pw1", "graph_median_us": 6.0},
   {"candidate": "${k}_bm64_bn48_bk128_wg2_s16_sc2_sk1_pw1", "graph_median_us": 6.3},
   {"candidate": "${k}_bm64_bn48_bk256_wg2_s8_sc2_sk1", "graph_median_us": 6.6},
   {"candidate": "${k}_bm64_bn48_bk128_wg2_s16_sc2_sk1", "graph_median_us": 6.4},
   {"candidate": "cublaslt:algo=0", "graph_median_us": 8.0},
   {"candidate": "${k}_bm64_bn64_bk128_wg2_s8_sc2_sk1", "graph_median_us": null}]},
 {"problem": "n2560_k4096_nk_tok_ch_bf16", "m_bucket": 64, "winner": "cublaslt:algo=0",
  "candidates": [{"candidate": "cublaslt:algo=0", "graph_median_us": 7.0}]}]}
JSON
if python3 "$root/scripts/packed_report.py" "$tmp/race.json" > "$tmp/t.md"; then
  fail "a bucket without a packed twin must fail"
fi
cat "$tmp/t.md"
# M = 32: best packed 6.0 (bn48 bk256 s8) against its tile's plain 6.6 (0.909) and the best plain
# kernel, bn48 bk128 s16 at 6.4 (0.938).
grep -qF '| n2560_k4096_nk_tok_ch_bf16 | 32 | bm64_bn48_bk256_wg2_s8_sc2_sk1_pw1 | 6.00 | bm64_bn48_bk256_wg2_s8_sc2_sk1 | 6.60 | 0.909 | bm64_bn48_bk128_wg2_s16_sc2_sk1 | 6.40 | 0.938 |' "$tmp/t.md" \
  || fail "expected the M = 32 row"
grep -qF '| n2560_k4096_nk_tok_ch_bf16 | 64 | (none timed) |' "$tmp/t.md" || fail "expected the M = 64 row without twins"
echo "packed_report_check: ok"

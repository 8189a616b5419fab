#!/usr/bin/env bash
# Runs bench/report.py on a hand-made fixture and checks what it writes. Needs python3;
# matplotlib only for the PNG (the check passes without it, as report.py skips the plot).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "report_check: FAIL: $*" >&2; exit 1; }

python3 "$root/bench/report.py" "$root/tests/bench/report_fixture.json" --title fixture \
  --md "$tmp/r.md" --csv "$tmp/r.csv" --json "$tmp/r.json" --png "$tmp/r.png" > "$tmp/stdout"
for f in r.md r.csv r.json; do [[ -s "$tmp/$f" ]] || fail "$f missing or empty"; done

# M=4096: cublaslt_i8 (40 us, not a peer) and an unverified fp8 row (30 us) are faster than
# cutlass_best (61.31 us); the best peer must still be cutlass_best, ratio 61.31 / 53.0.
grep -qF '| cutlass_best 61.31 | 1.16x |' "$tmp/r.md" || fail "expected best peer cutlass_best and ratio 1.16x at M=4096"
grep -qF '[1] unsupported: K=384' "$tmp/r.md" || fail "expected a footnote for the unsupported row"
grep -qF 'M=4096: cublaslt_i8_dq_tuner within 3% of cublaslt_i8_dq_plain: no (1.325)' "$tmp/stdout" \
  || fail "expected the tuner-vs-plain check on stdout"
grep -qF '| tp4_qkv 2560×4096 | 1 | 10.40 | 10.90 | 9.00 | 1.048 ✗ |' "$tmp/r.md" \
  || fail "expected the baseline table row for tp4_qkv M=1 (plain 10.40, bench 10.90, ratio 1.048 flagged)"
# The issues' targets: the ratio grid and the windows, from the same best peers.
grep -qF '| tp4_qkv 2560×4096 | 1.37 | 1.25 | 1.16 |' "$tmp/r.md" || fail "expected the targets grid row of tp4_qkv"
grep -qF '2 of 2 points met (1 without a read ceiling) — **met where checked**' "$tmp/r.md" || fail "expected the decode window line"
grep -qF '1 points, geometric mean 1.16x, lowest 1.16x, 1 at or above 1.00x — **met**' "$tmp/r.md" \
  || fail "expected the M >= 2048 window line"
# What the ceilings allow: best peer / max(read ceiling, 2MNK at 7462 ops/clk/SM x 132 SMs x the
# fastest verified row's clock): M=1 6.69 / 4.21 = 1.59; M=4096 61.31 / 44.05 (1980 MHz) = 1.39;
# tp4_down has no read ceiling.
grep -qF '| tp4_qkv 2560×4096 | 1.59 | 1.55 | 1.39 |' <(sed -n '/## What the ceilings allow/,$p' "$tmp/r.md") \
  || fail "expected the ceilings' bound row of tp4_qkv"
grep -qF '| tp4_down 4096×384 | — | — | — |' <(sed -n '/## What the ceilings allow/,$p' "$tmp/r.md") \
  || fail "expected no bound without a read ceiling"
grep -qF -- '- M ≥ 2048: 1 points, geometric mean of the bound 1.39x (target 1.05x), lowest 1.39x, 0 below the target' \
  "$tmp/r.md" || fail "expected the bound's M >= 2048 line"
[[ $(wc -l < "$tmp/r.csv") -eq 29 ]] || fail "expected 28 CSV rows and a header"

# Without matplotlib: no plot, a message, everything else written, exit 0.
python3 -c 'import runpy, sys; sys.modules["matplotlib"] = None; sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name="__main__")' \
  "$root/bench/report.py" "$root/tests/bench/report_fixture.json" \
  --md "$tmp/n.md" --csv "$tmp/n.csv" --json "$tmp/n.json" --png "$tmp/n.png" > /dev/null 2> "$tmp/stderr" \
  || fail "exit status without matplotlib"
grep -q 'matplotlib missing' "$tmp/stderr" || fail "no message without matplotlib"
[[ -s "$tmp/n.md" && ! -e "$tmp/n.png" ]] || fail "without matplotlib: md must exist and png must not"

# Unreadable JSON: a message and a non-zero exit.
echo '{"rows": [' > "$tmp/bad.json"
if python3 "$root/bench/report.py" "$tmp/bad.json" --md "$tmp/b.md" --csv "$tmp/b.csv" --json "$tmp/b.json" \
     --png "$tmp/b.png" 2> "$tmp/stderr"; then fail "bad JSON accepted"; fi
grep -q 'cannot read JSON' "$tmp/stderr" || fail "no message for bad JSON"
# An i8gemm variant (i8gemm_packed, from bench --experimental-packed-weight) is a column, never a
# peer, with its own ratio against the same best peer: 61.31 / 50.0 at M=4096.
python3 - "$root/tests/bench/report_fixture.json" "$tmp/v.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["rows"].append({"contender": "i8gemm_packed", "shape": "tp4_qkv", "n": 2560, "k": 4096, "m": 4096, "status": "ok",
                  "graph_median_us": 50.0, "graph_p90_us": 50.5, "graph_min_us": 49.8, "sm_mhz": 1700,
                  "power_w": 690, "verified": True, "note": "a packed twin"})
json.dump(d, open(sys.argv[2], "w"))
PY
python3 "$root/bench/report.py" "$tmp/v.json" --md "$tmp/v.md" --csv "$tmp/v.csv" --json "$tmp/vr.json" \
  --png "$tmp/v.png" > /dev/null 2>&1 || fail "exit status with a variant row"
grep -qF '| i8gemm_packed / best peer |' "$tmp/v.md" || fail "expected the variant's ratio column"
grep '^| 4096 |' "$tmp/v.md" | grep -qF '| cutlass_best 61.31 | 1.16x |' || fail "the variant must not be the best peer"
grep '^| 4096 |' "$tmp/v.md" | grep -qE '\| 1\.23x \|$' || fail "expected the variant's ratio 1.23x at M=4096"

# i8gemm_rt (i8gemm timed in the peers' process): a second targets section from its own times, never a
# peer; an unverified i8gemm_rt row (M=16) is left out of it. 61.31 / 55.0 = 1.11x at M=4096,
# 6.69 / 4.5 = 1.49x at M=1.
python3 - "$root/tests/bench/report_fixture.json" "$tmp/rt.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for m, t, ok in ((1, 4.5, True), (16, 1.0, False), (4096, 55.0, True)):
    d["rows"].append({"contender": "i8gemm_rt", "shape": "tp4_qkv", "n": 2560, "k": 4096, "m": m, "status": "ok",
                      "graph_median_us": t, "graph_p90_us": t, "graph_min_us": t, "sm_mhz": 1700,
                      "power_w": 690, "verified": ok, "note": "prepare's pick"})
json.dump(d, open(sys.argv[2], "w"))
PY
python3 "$root/bench/report.py" "$tmp/rt.json" --md "$tmp/rt.md" --csv "$tmp/rt.csv" --json "$tmp/rtr.json" \
  --png "$tmp/rt.png" > /dev/null 2>&1 || fail "exit status with i8gemm_rt rows"
grep -qF "## Against the issues' targets, i8gemm timed in the peers' process (i8gemm_rt)" "$tmp/rt.md" \
  || fail "expected the same-process targets section"
grep -qF '| tp4_qkv 2560×4096 | 1.49 | — | 1.11 |' "$tmp/rt.md" || fail "expected the i8gemm_rt grid row (unverified M=16 left out)"
grep -qF '| tp4_qkv 2560×4096 | 1.37 | 1.25 | 1.16 |' "$tmp/rt.md" || fail "the bench targets grid must stay as it was"
grep '^| 4096 |' "$tmp/rt.md" | grep -qF '| cutlass_best 61.31 | 1.16x |' || fail "i8gemm_rt must not be the best peer"
if grep -qF "i8gemm timed in the peers' process" "$tmp/r.md"; then fail "no same-process section without i8gemm_rt rows"; fi

echo "report_check: ok"

#!/usr/bin/env bash
# Which step makes a kernel leave its first-timing state on fresh operands (session 45: the plain
# ping-pong 128x128 at M = 4096 times 9-18% slower in its first graph timing than in every later
# one; docs/results/h100_2026-12-07_s45_calls.md, call 5). On the GPU machine, over a build made
# elsewhere: for each kernel and each sequence of steps, one process of `i8gemm_timeline
# --placements` over ROWS fresh operand sets; prints its `times` lines.
#   KERNELS="i8g_sm90a_wgmma_tma_n4096_k4096_..._sk1" M=4096 bash scripts/gpu_first_timing.sh
# Env: OUT (default /tmp/out), BUILD (default build), KERNELS (names, space separated), M,
# CACHE (an i8gemm cache holding them, else they compile into a fresh one), SEQUENCES (default
# "ggggeg zggeg 1ggeg gpgpg": g graph timing, e eager timing, 1 one launch per set, m move,
# z outputs zeroed, p 100 ms pause, P 2 s pause), ROWS (default 3), SAMPLES (default 10).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
OUT=${OUT:-/tmp/out}
BUILD=${BUILD:-build}
KERNELS=${KERNELS:?"KERNELS=\"i8g_... ...\""}
M=${M:?"M=rows of x"}
CACHE=${CACHE:-$OUT/first_timing.sqlite}
mkdir -p "$OUT/first_timing"
export LD_LIBRARY_PATH="$PWD/$BUILD/runtime${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
status=0
for k in $KERNELS; do
  for q in ${SEQUENCES:-ggggeg zggeg 1ggeg gpgpg}; do
    f="$OUT/first_timing/${k: -40}.$q.txt"
    if ! timeout 120 "$BUILD/bench/i8gemm_timeline" --kernel "$k" --m "$M" --cache "$CACHE" --rows "${ROWS:-3}" \
      --placements --sequence "$q" --samples "${SAMPLES:-10}" -o "$f" >/dev/null 2>"$f.err"; then
      echo "i8gemm_timeline failed: $k $q (see $f.err)"
      status=1
      continue
    fi
    echo "== $k $q"
    grep times "$f" | cut -d' ' -f2-
  done
done
exit $status

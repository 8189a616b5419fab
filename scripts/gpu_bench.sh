#!/usr/bin/env bash
# The benchmark pass, on the GPU machine, over a build made elsewhere: tune the shapes, then in
# one run time what prepare picks and every peer by the same protocol, and write the report.
#   STAGES="tune bench peers torch report" SHAPES="examples/tp4.shapes examples/llama3-8b.shapes" \
#     MS=1,16,128,1024,4096 bash scripts/gpu_bench.sh
# Env: OUT (default /tmp/out), BUILD (default build), TUNE_CACHE (default $OUT/tuned.sqlite),
# SAMPLES (timed samples, default 50), TUNE_SAMPLES (default 20), TUNE_FLAGS (more `tune` flags,
# e.g. "--experimental-wgmma --filter wgmma_tma"), PRECOMPILED (a cache from scripts/precompile.sh
# or an earlier call's CACHE_OUT, .sqlite or .xz: seeds TUNE_CACHE when that does not exist yet),
# CACHE_OUT (a file name: the tuned cache, checkpointed and packed into $OUT after the tune stage,
# .xz compresses it), BENCH_FLAGS (more `bench` flags, e.g. "--graph-only"),
# CUTLASS_PDL (default 1: the peers stage also times CUTLASS launched with PDL; 0: not),
# WARMUP_MS (default 100: bench, peers and torch warm every timing up for at least that many ms of
# its own launches, so that each is timed under sustained load, as a busy server runs; 0: the
# 50-launch warm-up alone, which times short bursts after idle gaps: docs/performance.md, session 46),
# FINAL_WARMUP_MS (default 0: `tune --final-warmup-ms`, the tune's final round warmed for that
# long before each placement; docs/tuning.md, step 5), STAGE_TIMEOUT (seconds a
# stage may run, default 580), TITLE (the report's title). Writes into $OUT: gpu_bench.log,
# bench.json, peers.json, torch.json, report.{md,csv,json,png}, race.txt (after a tune: every
# candidate's time per bucket against the winner); with --experimental-packed-weight in
# TUNE_FLAGS also race.json and packed.md (scripts/packed_report.py: the packed twins against
# the plain kernels in the tune), and bench times each bucket's fastest twin as i8gemm_packed
# (in bench.json and the report, beside the peers).
# Exit status: non-zero when a stage failed (the others still run).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}
BUILD=${BUILD:-build}
STAGES=${STAGES:-tune bench peers torch report}
SHAPES=${SHAPES:-examples/tp4.shapes examples/llama3-8b.shapes}
MS=${MS:-1,16,128,1024,4096}
SAMPLES=${SAMPLES:-50}
WARMUP_MS=${WARMUP_MS:-100}
TUNE_CACHE=${TUNE_CACHE:-$OUT/tuned.sqlite}
T=${STAGE_TIMEOUT:-580}
LOG="$OUT/gpu_bench.log"
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$PWD/$BUILD/runtime${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
status=0
has() { [[ " $STAGES " == *" $1 "* ]]; }
stage() {  # stage NAME CMD...: runs with a timeout, appends to the log
  echo "=== $1 ($(date -u +%H:%M:%S))" | tee -a "$LOG"
  shift
  timeout "$T" "$@" 2>&1 | tee -a "$LOG"
  local rc=${PIPESTATUS[0]}
  [ "$rc" -ne 0 ] && { status=1; echo "=== rc=$rc" | tee -a "$LOG"; }
}

# The shapes files, joined, for i8gemm; their lines as NAME=NxK arguments for the peers.
shapes_file=$(mktemp /tmp/gpu_bench_shapes.XXXXXX)
cat $SHAPES > "$shapes_file"
shapes_flags=(--shapes "$shapes_file")
shape_args=()
for f in $SHAPES; do
  while read -r name nk _; do
    [[ -z "$name" || "$name" == \#* ]] && continue
    shape_args+=(--shape "$name=$nk")
  done < "$f"
done

if has tune; then
  # A cache compiled elsewhere (scripts/precompile.sh) or packed by an earlier call seeds a new one.
  if [ -n "${PRECOMPILED:-}" ] && [ ! -e "$TUNE_CACHE" ]; then
    python3 scripts/cache_file.py unpack "$PRECOMPILED" "$TUNE_CACHE" || status=1
  fi
  # --resume: a tune cut off by the stage timeout carries on in the next call (same cache)
  stage "tune ${SHAPES} M=$MS" "$BUILD/tools/i8gemm" tune "${shapes_flags[@]}" --m "$MS" \
    --samples "${TUNE_SAMPLES:-20}" --final-warmup-ms "${FINAL_WARMUP_MS:-0}" --cache "$TUNE_CACHE" --resume ${TUNE_FLAGS:-}
  # The cache, WAL checkpointed, packed into $OUT for a later call's PRECOMPILED (CACHE_OUT=name.xz)
  if [ -n "${CACHE_OUT:-}" ]; then
    python3 scripts/cache_file.py pack "$TUNE_CACHE" "$OUT/$CACHE_OUT" || { status=1; echo "packing the cache failed"; }
  fi
  # every candidate's tune time per bucket, against its winner (kept with the logs)
  "$BUILD/tools/i8gemm" inspect race --cache "$TUNE_CACHE" >"$OUT/race.txt" 2>&1 || echo "inspect race failed (race.txt)"
  # with --experimental-packed-weight: each bucket's best packed twin against the plain kernels
  if [[ " ${TUNE_FLAGS:-} " == *" --experimental-packed-weight "* ]]; then
    "$BUILD/tools/i8gemm" inspect race --cache "$TUNE_CACHE" --json >"$OUT/race.json" 2>/dev/null &&
      python3 scripts/packed_report.py "$OUT/race.json" | tee "$OUT/packed.md" | tee -a "$LOG" ||
      { status=1; echo "packed report failed"; }
  fi
fi
if has bench; then
  packed_flag=()  # the tune raced packed-weight twins: time each bucket's fastest beside prepare's kernel
  [[ " ${TUNE_FLAGS:-} " == *" --experimental-packed-weight "* ]] && packed_flag=(--experimental-packed-weight)
  stage "bench" "$BUILD/tools/i8gemm" bench "${shapes_flags[@]}" --m "$MS" --samples "$SAMPLES" --warmup-ms "$WARMUP_MS" \
    --cache "$TUNE_CACHE" --json "$OUT/bench.json" "${packed_flag[@]}" ${BENCH_FLAGS:-}
fi
if has peers; then
  if [ -x "$BUILD/bench/i8gemm_peers" ]; then
    # CUTLASS also launched with PDL (cutlass_best_pdl, a peer like the rest): i8gemm's launches
    # are programmatic and may trigger their dependents (docs/pdl.md), so CUTLASS gets the same.
    pdl_flag=(--cutlass-pdl)
    [ "${CUTLASS_PDL:-1}" = 0 ] && pdl_flag=()
    stage "peers" "$BUILD/bench/i8gemm_peers" "${shape_args[@]}" --m "$MS" --samples "$SAMPLES" --warmup-ms "$WARMUP_MS" \
      --cache "$TUNE_CACHE" --json "$OUT/peers.json" "${pdl_flag[@]}"
  else
    echo "=== peers: $BUILD/bench/i8gemm_peers was not built (no nvcc where it was built)" | tee -a "$LOG"
  fi
fi
if has torch; then
  stage "torch" python3 bench/torch_peers.py "${shape_args[@]}" --m "$MS" --samples "$SAMPLES" --warmup-ms "$WARMUP_MS" --json "$OUT/torch.json"
fi
if has report; then
  inputs=()
  for j in bench peers torch; do [ -f "$OUT/$j.json" ] && inputs+=("$OUT/$j.json"); done
  stage "report" python3 bench/report.py "${inputs[@]}" --md "$OUT/report.md" --csv "$OUT/report.csv" \
    --json "$OUT/report.json" --png "$OUT/report.png" --title "${TITLE:-$(date -u +%F)}"
fi
exit $status

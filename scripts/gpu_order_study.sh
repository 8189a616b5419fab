#!/usr/bin/env bash
# The tile-order study, on the GPU machine, over a build made elsewhere (docs/wgmma_tma.md, "Tile
# order and L2 hints"): the twins' GPU tests, then at each point every variant of one tile alone
# in its own cache (tuned with --experimental-tile-order and a filter that leaves only it), timed
# as i8gemm_rt over ROWS allocations of the shape in each of PROCS peers processes (CUTLASS's
# vllm_default beside the first variant), and profiled by ncu (DRAM bytes, L2 hit rate, SM
# active cycles; CUTLASS beside the first variant); first, the tuner's race of all the variants
# in one tune (inspect race). Prints one table per point last.
#   POINTS="4096x4096:4096 28672x4096:1024" PRECOMPILED=.stage/order.sqlite.xz bash scripts/gpu_order_study.sh
# Precompile here first (the candidates of the tile and its twins, for every shape of POINTS):
#   printf 'a 4096x4096\nb 28672x4096\n' > .stage/order.shapes
#   SHAPES=.stage/order.shapes TUNE_FLAGS="--experimental-tile-order --filter _bm128_bn128_bk128_wg2_" \
#     OUTFILE=.stage/order.sqlite.xz bash scripts/precompile.sh
# Env: OUT (default /tmp/out), BUILD (default build), POINTS (NxK:M ...), TILE (the name part
# before the variant, default ping-pong 128x128: _bm128_bn128_bk128_wg2_s[0-9]+_), VARIANTS (what
# follows it, the first the baseline; default the plain tile, its raster, hint, dynamic and cm2
# twins), ROWS (allocations per process, default 6), PROCS (processes, default 1), NCU (0 skips
# ncu), NCU_METRICS (more ncu metrics, comma separated), TESTS (0 skips the GPU tests), TUNE_FLAGS
# (more `tune` flags, e.g. --experimental-staged-store for _es1 variants), PRECOMPILED (a cache
# from scripts/precompile.sh: seeds every variant's cache). Writes
# $OUT/order/<point>/{tune,six,ncu}_<variant>.*, race.txt and $OUT/order/table.txt.
# Exit status: non-zero when a step failed (the others still run).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
OUT=${OUT:-/tmp/out}
BUILD=${BUILD:-build}
POINTS=${POINTS:?"POINTS=\"NxK:M ...\" (e.g. 4096x4096:4096)"}
TILE=${TILE:-_bm128_bn128_bk128_wg2_s[0-9]+_}
VARIANTS=${VARIANTS:-sc2_sk1 sc2_sk1_rg1 sc2_sk1_lh1 sc2_sk1_lh2 sc2_sk1_lh3 sc2_sk1_ds1 sc2_sk1_cm2 sc2_sk1_cm2_rg1 sc2_sk1_cm2_lh3}
ROWS=${ROWS:-6}
PROCS=${PROCS:-1}
export LD_LIBRARY_PATH="$PWD/$BUILD/runtime${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
D="$OUT/order"
mkdir -p "$D"
status=0
table="$D/table.txt"
# every tune of the study: the tile-order twins, and what TUNE_FLAGS adds
read -r -a tune_flags <<<"--experimental-tile-order ${TUNE_FLAGS:-}"
: >"$table"

if [ "${TESTS:-1}" != 0 ]; then
  timeout 300 "$BUILD/tests/test_gpu" --gtest_filter='WgmmaTma.TileOrder*:WgmmaTma.DynamicSchedule*' >"$D/tests.log" 2>&1 ||
    { status=1; echo "GPU tests failed (order/tests.log)"; }
  grep -E '^\[ +(OK|FAILED|SKIPPED) +\] .*\([0-9]+ ms\)$|\[ figure \]' "$D/tests.log" | tee -a "$table"
fi
seed=""
if [ -n "${PRECOMPILED:-}" ]; then
  seed="$D/seed.sqlite"
  python3 scripts/cache_file.py unpack "$PRECOMPILED" "$seed" >/dev/null || { status=1; seed=""; }
fi

# medians FILE: i8gemm_rt's (and CUTLASS's) graph medians, one per row, from a peers JSON
medians() {
  python3 - "$1" <<'EOF'
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
by = {}
for r in rows:
    if r["contender"] == "i8gemm_rt" or r["contender"].startswith("cutlass"):
        by.setdefault(r["contender"], []).append(r["graph_median_us"])
for name, ts in by.items():
    print(f"{name}: " + " ".join("-" if t is None else f"{t:.1f}" for t in ts))
EOF
}

for point in $POINTS; do
  shape=${point%%:*}
  m=${point##*:}
  P="$D/${shape}_m$m"
  mkdir -p "$P"
  echo "=== $shape M=$m ($(date -u +%H:%M:%S))" | tee -a "$table"
  # The tuner's own race of every variant at once (its final round interleaves the finalists).
  all="${TILE}($(echo $VARIANTS | tr ' ' '|'))\$"
  [ -n "$seed" ] && cp "$seed" "$P/all.sqlite"
  if timeout 240 "$BUILD/tools/i8gemm" tune --shape "$shape" --m "$m" --samples 20 "${tune_flags[@]}" \
      --filter "$all" --cache "$P/all.sqlite" >"$P/tune_all.log" 2>&1; then
    "$BUILD/tools/i8gemm" inspect race --cache "$P/all.sqlite" >"$P/race.txt" 2>&1
    grep -E '^ +[0-9]+ ' "$P/race.txt" | sed -E 's/ +/ /g; s/^/  race /' | cut -c1-160 | tee -a "$table"
  else
    status=1
    echo "the race failed ($P/tune_all.log)" | tee -a "$table"
  fi
  rows=()
  for i in $(seq "$ROWS"); do rows+=(--shape "r$i=$shape"); done
  first=1
  for v in $VARIANTS; do
    cache="$P/$v.sqlite"
    [ -n "$seed" ] && cp "$seed" "$cache"
    timeout 120 "$BUILD/tools/i8gemm" tune --shape "$shape" --m "$m" --samples 10 "${tune_flags[@]}" \
      --filter "${TILE}${v}\$" --cache "$cache" >"$P/tune_$v.log" 2>&1 ||
      { status=1; echo "tune $v failed ($P/tune_$v.log)" | tee -a "$table"; continue; }
    cut=(--no-cutlass)
    [ $first = 1 ] && cut=(--cutlass vllm_default)
    for p in $(seq "$PROCS"); do
      timeout 120 "$BUILD/bench/i8gemm_peers" "${rows[@]}" --m "$m" --samples 20 --ceiling-seconds 0 "${cut[@]}" \
        --cache "$cache" --json "$P/six_${v}_$p.json" >"$P/six_${v}_$p.log" 2>&1 ||
        { status=1; echo "peers $v failed" | tee -a "$table"; continue; }
      medians "$P/six_${v}_$p.json" | sed "s/^/  $v process $p  /" | tee -a "$table"
    done
    if [ "${NCU:-1}" != 0 ]; then
      cutlass=""
      [ $first = 1 ] && cutlass=vllm_default
      OUT="$P/ncu_$v" POINTS="$shape:$m" CACHE="$cache" CUTLASS="$cutlass" SECTIONS="SpeedOfLight" \
        METRICS="dram__bytes_read.sum,lts__t_sector_hit_rate.pct,sm__cycles_active.avg${NCU_METRICS:+,$NCU_METRICS}" \
        timeout 120 bash scripts/gpu_profile.sh >"$P/ncu_$v.txt" 2>&1 || status=1
      grep -E "dram__bytes|hit_rate|sm__cycles_active|Duration|${NCU_METRICS:+${NCU_METRICS//,/|}|}SM Frequency" "$P/ncu_$v.txt" |
        sed -E "s/ +/ /g; s/^/  $v ncu /" | tee -a "$table"
    fi
    first=0
  done
done
echo "=== table ($D/table.txt)"
cat "$table"
exit $status

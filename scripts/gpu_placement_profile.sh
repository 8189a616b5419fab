#!/usr/bin/env bash
# Which counters follow a kernel's time from one placement of its operands to the next (session
# 36: ping-pong 128x128 at 4096x4096 M = 4096 ran 93-118 us over 30 allocations, CUTLASS 96-98).
# On the GPU machine, over a build made elsewhere: one tile alone in its own cache (tuned with a
# filter), then ncu over every launch of it, and of CUTLASS's configuration beside it, in one
# i8gemm_peers process of ROWS rows of the same shape (each row its own operands, each rotating
# its sets), the metrics per launch (--page raw); then scripts/placement_counters.py: per
# contender, every metric's mean over the fastest and the slowest third of its launches and its
# correlation with the duration.
#   POINT=4096x4096:4096 FILTER='_bm128_bn128_bk128_wg2_s[0-9]+_sc2_sk1$' PRECOMPILED=.stage/preX.sqlite.xz \
#     bash scripts/gpu_placement_profile.sh
# Env: OUT (default /tmp/out), BUILD (default build), POINT (NxK:M), FILTER (tune --filter regex
# leaving the one kernel), TUNE_FLAGS (more tune flags), ROWS (default 8), SAMPLES (peers'
# samples, default 3), LAUNCHES (ncu --launch-count, default 800), CUTLASS (regex of the CUTLASS
# configuration, default vllm_default; "" for none), SECTIONS (ncu sections), METRICS (more ncu
# metrics, comma separated),
# NCU_TIMEOUT (seconds for the profiled run, default 400: the report keeps the launches profiled
# by then), PRECOMPILED (a cache from scripts/precompile.sh seeding the tune). Writes
# $OUT/placement/{tune.log,report.ncu-rep,raw.csv,ncu.log,counters.txt}.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
OUT=${OUT:-/tmp/out}
BUILD=${BUILD:-build}
POINT=${POINT:?"POINT=NxK:M"}
FILTER=${FILTER:?"FILTER=<tune --filter regex>"}
ROWS=${ROWS:-8}
CUTLASS=${CUTLASS-vllm_default}
SECTIONS=${SECTIONS-SpeedOfLight WarpStateStats MemoryWorkloadAnalysis}
METRICS=${METRICS:-gpu__time_duration.sum,sm__cycles_active.avg,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,lts__t_sector_hit_rate.pct,lts__t_sectors_op_write.sum}
shape=${POINT%%:*}
m=${POINT##*:}
D="$OUT/placement"
mkdir -p "$D"
export LD_LIBRARY_PATH="$PWD/$BUILD/runtime${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
command -v ncu >/dev/null || { echo "gpu_placement_profile: ncu not found on PATH" >&2; exit 2; }
cache="$D/one.sqlite"
[ -n "${PRECOMPILED:-}" ] && python3 scripts/cache_file.py unpack "$PRECOMPILED" "$cache" >/dev/null
read -r -a tune_flags <<<"${TUNE_FLAGS:-}"
timeout 180 "$BUILD/tools/i8gemm" tune --shape "$shape" --m "$m" --samples 10 --filter "$FILTER" "${tune_flags[@]}" \
  --cache "$cache" >"$D/tune.log" 2>&1 || { echo "the tune failed ($D/tune.log)"; tail -5 "$D/tune.log"; exit 1; }
grep -E "winner|$shape" "$D/tune.log" | tail -2
rows=()
for i in $(seq "$ROWS"); do rows+=(--shape "r$i=$shape"); done
cut=(--no-cutlass)
kernels="regex:^(wgmma_tma|wgmma|mma_sync|simt_dp4a|decode_mma)_kernel"
if [ -n "$CUTLASS" ]; then
  cut=(--cutlass "$CUTLASS")
  kernels="regex:^(wgmma_tma|wgmma|mma_sync|simt_dp4a|decode_mma)_kernel|device_kernel"
fi
sections=()
for sec in $SECTIONS; do sections+=(--section "$sec"); done
timeout "${NCU_TIMEOUT:-400}" ncu --clock-control none -k "$kernels" --launch-count "${LAUNCHES:-800}" "${sections[@]}" --metrics "$METRICS" \
  -f -o "$D/report" "$BUILD/bench/i8gemm_peers" "${rows[@]}" --m "$m" --samples "${SAMPLES:-3}" --ceiling-seconds 0 \
  "${cut[@]}" --cache "$cache" --json "$D/peers.json" >"$D/ncu.log" 2>&1 || { echo "ncu failed ($D/ncu.log)"; tail -5 "$D/ncu.log"; }
ncu --import "$D/report.ncu-rep" --csv --page raw >"$D/raw.csv" 2>>"$D/ncu.log" || { echo "ncu --import failed"; exit 1; }
python3 scripts/placement_counters.py "$D/raw.csv" | tee "$D/counters.txt"

#!/usr/bin/env bash
# Nsight Compute, side by side, on the GPU machine over a build made elsewhere: the kernel
# i8gemm runs at each point against one CUTLASS configuration of the peers program, one launch
# each, clocks not locked (the power limit is part of what is measured).
#   POINTS="28672x4096:1024 6144x4096:4096" CACHE=$OUT/tuned.sqlite bash scripts/gpu_profile.sh
# Env: OUT (default /tmp/out), BUILD (default build), POINTS (NxK:M ...), CACHE (an i8gemm
# cache; default: a fresh one, so the untuned default runs), CUTLASS (regex of the CUTLASS
# configuration, default vllm_default; "" skips it), KERNEL (ncu regex of i8gemm's kernel,
# default the generated families), SECTIONS (ncu sections), METRICS (more ncu metrics, comma
# separated, e.g. dram__bytes_read.sum,dram__bytes_write.sum), SKIP (launches skipped first).
# Writes $OUT/profile/<point>.{i8gemm,cutlass}.csv (ncu --page details) and prints one table
# per point: every metric both reports have, i8gemm's value beside CUTLASS's.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
OUT=${OUT:-/tmp/out}
BUILD=${BUILD:-build}
POINTS=${POINTS:?"POINTS=\"NxK:M ...\" (e.g. 28672x4096:1024)"}
CACHE=${CACHE:-$OUT/profile/untuned.sqlite}
CUTLASS=${CUTLASS-vllm_default}
# (ncu matches the function name, the template name, not the cache entry name i8g_sm90a_...)
KERNEL=${KERNEL:-"regex:^(wgmma_tma|wgmma|mma_sync|simt_dp4a|decode_mma)_kernel"}
SECTIONS=${SECTIONS:-"SpeedOfLight MemoryWorkloadAnalysis ComputeWorkloadAnalysis LaunchStats Occupancy SchedulerStats WarpStateStats"}
SKIP=${SKIP:-5}
export LD_LIBRARY_PATH="$PWD/$BUILD/runtime${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
mkdir -p "$OUT/profile"
command -v ncu >/dev/null || { echo "gpu_profile: ncu not found on PATH" >&2; exit 2; }
sections=()
for s in $SECTIONS; do sections+=(--section "$s"); done
[ -n "${METRICS:-}" ] && sections+=(--metrics "$METRICS")
status=0

# profile NAME KERNEL_REGEX CMD...: one launch of the matching kernel, details page as CSV.
profile() {
  local csv=$1 regex=$2
  shift 2
  ncu --clock-control none "${sections[@]}" -k "$regex" --launch-skip "$SKIP" --launch-count 1 \
    --csv --page details "$@" >"$csv" 2>"$csv.log" || { echo "ncu failed: $* (see $csv.log)"; status=1; }
}

for point in $POINTS; do
  shape=${point%%:*}
  m=${point##*:}
  base="$OUT/profile/${shape}_m${m}"
  echo "=== $shape M=$m"
  profile "$base.i8gemm.csv" "$KERNEL" \
    "$BUILD/tools/i8gemm" bench --shape "$shape" --m "$m" --samples 3 --cache "$CACHE"
  if [ -n "$CUTLASS" ]; then
    if [ -x "$BUILD/bench/i8gemm_peers" ]; then
      profile "$base.cutlass.csv" "regex:device_kernel" \
        "$BUILD/bench/i8gemm_peers" --shape "$shape" --m "$m" --samples 3 --ceiling-seconds 0 \
        --cutlass "$CUTLASS" --json "$base.peers.json" --cache "$CACHE"
    else
      echo "no $BUILD/bench/i8gemm_peers: i8gemm only"
    fi
  fi
  python3 - "$base.i8gemm.csv" "$base.cutlass.csv" <<'EOF' || status=1
import csv, os, sys

def metrics(path):
    """(kernel name, {section/metric: 'value unit'}) from one ncu --csv --page details file."""
    if not os.path.exists(path):
        return None, {}
    lines = [l for l in open(path, errors="replace") if l.startswith('"')]
    rows = list(csv.DictReader(lines))
    if not rows:
        return None, {}
    name = rows[0].get("Kernel Name", "?")
    out = {}
    for r in rows:
        key = f'{r.get("Section Name", "")} / {r.get("Metric Name", "")}'
        out.setdefault(key, f'{r.get("Metric Value", "")} {r.get("Metric Unit", "")}'.strip())
    return name, out

ours_name, ours = metrics(sys.argv[1])
peer_name, peer = metrics(sys.argv[2])
if not ours:
    print(f"  no i8gemm kernel profiled ({sys.argv[1]}.log says why)")
    sys.exit(1)
print(f"  i8gemm:  {ours_name[:150]}")
if peer_name:
    print(f"  CUTLASS: {peer_name[:150]}")
width = max(len(k) for k in ours)
for key, value in ours.items():
    print(f"  {key:<{width}}  {value:>22}  {peer.get(key, '') if peer else '':>22}")
EOF
done
exit $status

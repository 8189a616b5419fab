#!/usr/bin/env bash
# Where one wgmma_tma kernel's launches spend their time, unit by unit and SM by SM (a
# diagnostic, not a test). On the GPU machine, over a build made elsewhere: the kernel's source
# (`inspect source --inline`) stamped by `scripts/timeline_probe.py instrument-tiles` and loaded
# through I8GEMM_SOURCE_OVERRIDE_DIR by bench's i8gemm_timeline, which launches it over ROWS
# fresh operand allocations, back to back and (ISOLATED=1) alone after an L2 flush, and writes
# each stamped launch's units; `report-tiles` reads them. With PLAIN=1 the kernel as generated is
# also timed as i8gemm_rt in i8gemm_peers rows beside CUTLASS's configuration (its own cache), to
# show what its times are without stamps.
#   POINT=4096x4096:4096 NAME=i8g_sm90a_wgmma_tma_..._sk1 bash scripts/gpu_timeline.sh
# Env: OUT (default /tmp/out), BUILD (default build), POINT (NxK:M), NAME (the kernel), ROWS
# (default 6), LAUNCHES (stamped launches per row, default 4), WARM (default 40), ISOLATED (0/1,
# default 1), PLAIN (0/1), TUNE_FLAGS (for PLAIN's tune: flags it needs to offer the kernel),
# CUTLASS (regex, default vllm_default), TAG (subfolder, default the name's tail). Writes
# $OUT/timeline/TAG/{b2b.log,b2b.txt[,iso.log,iso.txt][,plain.json]}.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
OUT=${OUT:-/tmp/out}
BUILD=${BUILD:-build}
POINT=${POINT:?"POINT=NxK:M"}
NAME=${NAME:?"NAME=<kernel name>"}
TAG=${TAG:-${NAME##*_bk128_}}
shape=${POINT%%:*}
m=${POINT##*:}
D="$OUT/timeline/$TAG"
mkdir -p "$D/ovr"
export LD_LIBRARY_PATH="$PWD/$BUILD/runtime${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
"$BUILD/tools/i8gemm" inspect source "$NAME" --inline -o "$D/plain.cu" >/dev/null || exit 1
python3 scripts/timeline_probe.py instrument-tiles "$D/plain.cu" "$D/ovr/$NAME.cu" || exit 1
stamped() {  # tag, extra flags
  I8GEMM_SOURCE_OVERRIDE_DIR="$D/ovr" timeout 300 "$BUILD/bench/i8gemm_timeline" --kernel "$NAME" --m "$m" \
    --cache "$D/probe.sqlite" --rows "${ROWS:-6}" --launches "${LAUNCHES:-4}" --warm "${WARM:-40}" "${@:2}" \
    -o "$D/$1.log" >"$D/$1.out" 2>&1 || { echo "i8gemm_timeline failed ($1)"; tail -3 "$D/$1.out"; }
  python3 scripts/timeline_probe.py report-tiles "$D/$1.log" >"$D/$1.txt" 2>&1
  echo "== $TAG, $1"
  sed -n '/^spans by row/,$p' "$D/$1.txt"
}
stamped b2b
[ "${ISOLATED:-1}" = 1 ] && stamped iso --isolated
if [ "${PLAIN:-0}" = 1 ]; then
  read -r -a tune_flags <<<"${TUNE_FLAGS:-}"
  timeout 180 "$BUILD/tools/i8gemm" tune --shape "$shape" --m "$m" --samples 10 --filter "${NAME#i8g_*_n*_bf16}\$" \
    "${tune_flags[@]}" --cache "$D/plain.sqlite" >"$D/plain_tune.log" 2>&1 || echo "the plain tune failed"
  rows=()
  for i in $(seq "${ROWS:-6}"); do rows+=(--shape "r$i=$shape"); done
  timeout 300 "$BUILD/bench/i8gemm_peers" "${rows[@]}" --m "$m" --samples 30 --ceiling-seconds 0 \
    --cutlass "${CUTLASS:-vllm_default}" --cache "$D/plain.sqlite" --json "$D/plain.json" >"$D/plain.log" 2>&1 ||
    echo "peers failed"
  echo "== $TAG as generated, graph medians by row (us):"
  python3 - "$D/plain.json" <<'PY'
import json, sys
by = {}
for r in json.load(open(sys.argv[1]))["rows"]:
    if r["contender"] == "i8gemm_rt" or r["contender"].startswith("cutlass_vllm"):
        by.setdefault(r["contender"], []).append(r["graph_median_us"])
for name, ts in by.items():
    print(f"  {name}: " + " ".join("-" if t is None else f"{t:.1f}" for t in ts))
PY
fi
rm -f "$D"/*.sqlite

#!/usr/bin/env bash
# Source variants of wgmma_tma kernels at one point, side by side (a diagnostic for kernel work:
# what wins moves into the generator). On the GPU machine, over a build made elsewhere; for each
# variant TAG:NAME:EDITS[:TUNE_FLAGS] (TUNE_FLAGS comma separated; EDITS: scripts/source_variant.py's, comma separated, "-"
# for the generated source; a trailing "+t" also stamps it, scripts/timeline_probe.py):
#   1. the edited source through I8GEMM_SOURCE_OVERRIDE_DIR, tuned alone into its own cache: the
#      tuner checks it bit-exact like any kernel (its table line is printed);
#   2. timed as i8gemm_rt in one i8gemm_peers process of ROWS rows (each row its own operands),
#      CUTLASS's configuration beside it: graph medians per row;
#   3. i8gemm_timeline: LAUNCHES launches per row over ROWS fresh allocations, back to back and
#      isolated (MODES; event times; with +t the units' stamps too, reported by report-tiles).
# Last, one table: per variant the medians (min-max) over rows of each timing.
#   POINT=4096x4096:4096 VARIANTS="reg:i8g_sm90a_..._sk1:- krot:i8g_sm90a_..._sk1:krot" bash scripts/gpu_variants.sh
# Env: OUT (default /tmp/out), BUILD (default build), POINT, VARIANTS, ROWS (default 6), LAUNCHES
# (default 4), MODES (default "b2b iso"), SAMPLES (peers', default 30), CUTLASS (default
# vllm_default), PEERS_FLAGS (more i8gemm_peers flags, e.g. --cutlass-pdl). Writes
# $OUT/variants/TAG/* and $OUT/variants/table.txt.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
OUT=${OUT:-/tmp/out}
BUILD=${BUILD:-build}
POINT=${POINT:?"POINT=NxK:M"}
VARIANTS=${VARIANTS:?"VARIANTS=TAG:NAME:EDITS[:TUNE_FLAGS] ..."}
ROWS=${ROWS:-6}
shape=${POINT%%:*}
m=${POINT##*:}
V="$OUT/variants"
mkdir -p "$V"
export LD_LIBRARY_PATH="$PWD/$BUILD/runtime${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
rows=()
for i in $(seq "$ROWS"); do rows+=(--shape "r$i=$shape"); done
for spec in $VARIANTS; do
  IFS=: read -r tag name edits tflags <<<"$spec"
  D="$V/$tag"
  mkdir -p "$D/ovr"
  env=()
  stamp=0
  [[ "$edits" == *+t ]] && { stamp=1; edits=${edits%+t}; }
  [ -z "$edits" ] && edits=-
  if [ "$edits" != "-" ] || [ $stamp = 1 ]; then
    "$BUILD/tools/i8gemm" inspect source "$name" --inline -o "$D/plain.cu" >/dev/null || continue
    cp "$D/plain.cu" "$D/ovr/$name.cu"
    if [ "$edits" != "-" ]; then python3 scripts/source_variant.py "$D/plain.cu" "$D/ovr/$name.cu" "$edits" || continue; fi
    if [ $stamp = 1 ]; then python3 scripts/timeline_probe.py instrument-tiles "$D/ovr/$name.cu" "$D/ovr/$name.cu" || continue; fi
    env=(I8GEMM_SOURCE_OVERRIDE_DIR="$D/ovr")
  fi
  read -r -a tune_flags <<<"${tflags//,/ }"  # TUNE_FLAGS: comma separated
  env "${env[@]}" timeout 200 "$BUILD/tools/i8gemm" tune --shape "$shape" --m "$m" --samples 10 \
    --filter "${name#i8g_*_n*_bf16}\$" "${tune_flags[@]}" --cache "$D/c.sqlite" >"$D/tune.log" 2>&1 ||
    { echo "$tag: the tune failed"; tail -3 "$D/tune.log"; continue; }
  line=$(grep -E "^$shape " "$D/tune.log" | tr -s ' ')
  echo "$tag: ${line:0:200}"
  # Below cuBLASLt the tune keeps cuBLASLt, and i8gemm_rt would time that: no peers row then.
  if [[ "$line" != *"$name"* ]]; then
    echo "$tag: the tune did not keep the variant (slower than its cuBLASLt baseline): no i8gemm_rt timing"
  else
    env "${env[@]}" timeout 300 "$BUILD/bench/i8gemm_peers" "${rows[@]}" --m "$m" --samples "${SAMPLES:-30}" \
      --ceiling-seconds 0 --cutlass "${CUTLASS:-vllm_default}" ${PEERS_FLAGS:-} --cache "$D/c.sqlite" --json "$D/peers.json" \
      >"$D/peers.log" 2>&1 || echo "$tag: peers failed"
  fi
  for mode in ${MODES:-b2b iso}; do
    flag=()
    [ $mode = iso ] && flag=(--isolated)
    env "${env[@]}" timeout 200 "$BUILD/bench/i8gemm_timeline" --kernel "$name" --m "$m" --cache "$D/c.sqlite" \
      --rows "$ROWS" --launches "${LAUNCHES:-4}" "${flag[@]}" -o "$D/$mode.log" >"$D/$mode.out" 2>&1 ||
      { echo "$tag: i8gemm_timeline failed ($mode)"; tail -2 "$D/$mode.out"; }
    [ $stamp = 1 ] && python3 scripts/timeline_probe.py report-tiles "$D/$mode.log" >"$D/$mode.txt" 2>&1
  done
  rm -f "$D/c.sqlite"
done
python3 - "$V" $VARIANTS <<'PY' | tee "$V/table.txt"
import json, os, re, statistics, sys
v = sys.argv[1]
def fmt(ts):
    ts = [t for t in ts if t is not None]
    return f"{statistics.median(ts):6.2f} ({min(ts):.2f}-{max(ts):.2f})" if ts else "-"
print(f"{'variant':<10} {'i8gemm_rt graph':>22} {'cutlass graph':>22} {'cutlass PDL graph':>22} {'cublaslt_fp8 graph':>22} {'back to back':>22} {'isolated':>22}   (us; median (min-max) over rows / launches)")
for spec in sys.argv[2:]:
    tag = spec.split(":")[0]
    d = os.path.join(v, tag)
    rt, cut, cpdl, fp8 = [], [], [], []
    try:
        for r in json.load(open(os.path.join(d, "peers.json")))["rows"]:
            if r["contender"] == "i8gemm_rt": rt.append(r["graph_median_us"])
            if r["contender"] == "cutlass_best": cut.append(r["graph_median_us"])
            if r["contender"] == "cutlass_best_pdl": cpdl.append(r["graph_median_us"])
            if r["contender"] == "cublaslt_fp8": fp8.append(r["graph_median_us"])
    except (OSError, ValueError, KeyError):
        pass
    ev = {}
    for mode in ("b2b", "iso"):
        try:
            ev[mode] = [float(x) for x in re.findall(r"event_us=([\d.]+)", open(os.path.join(d, mode + ".log")).read())]
        except OSError:
            ev[mode] = []
    print(f"{tag:<10} {fmt(rt):>22} {fmt(cut):>22} {fmt(cpdl):>22} {fmt(fp8):>22} {fmt(ev['b2b']):>22} {fmt(ev['iso']):>22}")
PY

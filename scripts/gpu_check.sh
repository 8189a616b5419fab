#!/usr/bin/env bash
# The GPU pass, on the GPU machine, over a build made elsewhere (never rebuilds here):
#   scripts/gpu_check.sh            logs and XML under $OUT (default /tmp/out)
# Env: OUT, BUILD (default build; the tree carried over), SKIP_PYTHON=1, DECODE=1 (below),
# I8GEMM_TEST_CACHE (kernel cache the test runs share, so sanitizer runs reuse the kernels the
# first run compiled),
# WHEEL (a wheel built elsewhere, e.g. by `pip wheel .`: its Python GPU tests run again against
# it, installed offline into a venv over this machine's torch),
# SANITIZER_TIMEOUT (seconds per sanitizer run, default 170), SKIP_SANITIZER=1, and the
# sanitizer runs' gtest filters (GEMM_MEMCHECK_FILTER, GEMM_RACE_FILTER, DP4A_FILTER, UTIL_FILTER).
# Exit status: 0 when every suite passed (skips allowed) and the sanitizers found nothing.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}
BUILD=${BUILD:-build}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$PWD/$BUILD/runtime${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export I8GEMM_TEST_CACHE=${I8GEMM_TEST_CACHE:-/tmp/i8g_gpu_check_cache.sqlite}
# The AMD backend's helper (CPU suites only): this tree's copy, wherever the tree was carried.
if [ -z "${I8GEMM_HIPRTC_WORKER:-}" ] && [ -x "$BUILD/tools/i8gemm_hiprtc_worker" ]; then
  export I8GEMM_HIPRTC_WORKER="$PWD/$BUILD/tools/i8gemm_hiprtc_worker"
fi
SAN_T=${SANITIZER_TIMEOUT:-170}
declare -a ROWS=()
status=0

# gtest's closing lines -> "passed failed skipped" (from the log of one run).
counts() {
  local log=$1 p f s
  p=$(grep -E '^\[  PASSED  \] [0-9]+ test' "$log" | tail -1 | grep -oE '[0-9]+' | head -1)
  f=$(grep -E '^\[  FAILED  \] [0-9]+ test' "$log" | tail -1 | grep -oE '[0-9]+' | head -1)
  s=$(grep -E '^\[  SKIPPED \] [0-9]+ test' "$log" | tail -1 | grep -oE '[0-9]+' | head -1)
  echo "${p:-0} ${f:-0} ${s:-0}"
}

# run_suite NAME LOG CMD...: runs, tees the log, records a summary row.
run_suite() {
  local name=$1 log=$2
  shift 2
  echo "=== $name: $*"
  "$@" 2>&1 | tee "$log"
  local rc=${PIPESTATUS[0]}
  read -r p f s < <(counts "$log")
  local note="rc=$rc"
  if grep -qE '(ERROR|RACECHECK) SUMMARY' "$log"; then
    note="$note $(grep -E '(ERROR|RACECHECK) SUMMARY' "$log" | tail -1 | sed 's/^=* *//')"
  fi
  [ "$rc" -ne 0 ] && status=1
  ROWS+=("$(printf '%-34s %7s %7s %7s  %s' "$name" "$p" "$f" "$s" "$note")")
}

echo "=== devices"
nvidia-smi -L 2>&1 | tee "$OUT/nvidia-smi.txt" || echo "nvidia-smi failed"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv 2>&1 | tee -a "$OUT/nvidia-smi.txt"

# ---- the GPU suite ---------------------------------------------------------------------------
if [ "${SKIP_MAIN:-0}" = 1 ]; then
  ROWS+=("$(printf '%-34s %7s %7s %7s  %s' test_gpu - - - 'skipped (SKIP_MAIN=1)')")
elif [ -x "$BUILD/tests/test_gpu" ]; then
  run_suite test_gpu "$OUT/test_gpu.log" \
    "$BUILD/tests/test_gpu" --gtest_output="xml:$OUT/test_gpu.xml"
else
  echo "missing $BUILD/tests/test_gpu"
  ROWS+=("$(printf '%-34s %7s %7s %7s  %s' test_gpu - - - 'missing binary')")
  status=1
fi

# ---- the same correctness tests with the default forced elsewhere: split-K on every mma_sync
# default where it is valid (I8GEMM_SPLIT_K), and the reference family (I8GEMM_FAMILY), so
# neither goes untested where the heuristic would not pick it. SKIP_OVERRIDES=1 skips.
if [ "${SKIP_OVERRIDES:-0}" != 1 ] && [ -x "$BUILD/tests/test_gpu" ]; then
  OVERRIDE_FILTER=${OVERRIDE_FILTER:-'GemmRows*:GemmTails*:GemmCorrect*:Tp4Correct*:GraphSafe*:SplitK*'}
  I8GEMM_SPLIT_K=3 run_suite "test_gpu I8GEMM_SPLIT_K=3" "$OUT/test_gpu_split3.log" \
    "$BUILD/tests/test_gpu" --gtest_filter="$OVERRIDE_FILTER"
  I8GEMM_FAMILY=simt_dp4a run_suite "test_gpu I8GEMM_FAMILY=simt_dp4a" "$OUT/test_gpu_dp4a.log" \
    "$BUILD/tests/test_gpu" --gtest_filter="$OVERRIDE_FILTER"
fi

# ---- the Python package's GPU tests (python/tests, docs/python.md), from this tree: the package
# from python/, the library from $BUILD (no install, no network). Needs torch with CUDA and
# pytest on this machine; SKIP_PYTHON=1 skips.
if [ "${SKIP_PYTHON:-0}" != 1 ]; then
  if python3 -c 'import torch, pytest, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
    PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}" I8GEMM_LIBRARY="$PWD/$BUILD/runtime/libi8gemm.so.0" \
      run_suite "python (torch ops)" "$OUT/python.log" python3 -m pytest -q -p no:cacheprovider \
      --junitxml="$OUT/python.xml" python/tests
    # pytest's closing line is not gtest's: the row's counts come from it.
    ROWS[${#ROWS[@]}-1]="$(printf '%-34s %s' "python (torch ops)" "$(tail -1 "$OUT/python.log")")"
  else
    ROWS+=("$(printf '%-34s %7s %7s %7s  %s' python - - - 'skipped: no torch with CUDA, or no pytest')")
  fi
fi

# ---- the same tests against a pip-installed wheel (WHEEL=path): a venv that sees this machine's
# torch and pytest, the wheel installed with no network and no dependencies, the tests run from
# python/tests so that `import i8gemm` is the installed package with its bundled library.
# python3 may itself be a venv (the H200's is /opt/torch/.venv), whose packages a venv made
# from it does not see even with --system-site-packages (that is the base interpreter's): a .pth
# puts python3's own site-packages after the new venv's, so the wheel's i8gemm comes first.
if [ -n "${WHEEL:-}" ]; then
  venv=$(mktemp -d /tmp/i8g_wheel_venv.XXXXXX)
  if python3 -m venv --system-site-packages "$venv" &&
     python3 -c 'import site; print("\n".join(site.getsitepackages()))' \
       > "$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/_i8g_outer_site.pth" &&
     "$venv/bin/python" -m pip install -q --no-index --no-deps --disable-pip-version-check "$WHEEL"        > "$OUT/wheel_install.log" 2>&1; then
    (cd python/tests && env -u PYTHONPATH -u I8GEMM_LIBRARY I8GEMM_EXPECT_WHEEL=1 \
      "$venv/bin/python" -m pytest -q -p no:cacheprovider --junitxml="$OUT/python_wheel.xml" . \
      > "$OUT/python_wheel.log" 2>&1) || status=1
    ROWS+=("$(printf '%-34s %s' "python (installed wheel)" "$(tail -1 "$OUT/python_wheel.log")")")
  else
    status=1
    ROWS+=("$(printf '%-34s %s' "python (installed wheel)" "install failed: $OUT/wheel_install.log")")
  fi
fi

# ---- compute-sanitizer: memcheck, racecheck, synccheck over every family and kernel kind -----
# Kernels come from the cache the run above filled (error-injection tests use private caches
# and compile their own). Seven runs, each a few tests under `timeout $SAN_T` (at most
# 7 x SANITIZER_TIMEOUT in all), one summary row each:
#   gemm            simt_dp4a (K % 16 != 0, [K,N]) and mma_sync ([N,K], K % 16 == 0, the H200
#                   default), M tails and buckets, colsum (asymmetric cases), quantize rows and
#                   tensor, graph replay, threads
#   forced dp4a     I8GEMM_FAMILY=simt_dp4a over tests whose default is mma_sync
#   utility+lt+inj  quantize per tensor, colsum, the cuBLASLt bucket path (cuBLASLt int8 +
#                   i8g_dequant) and the error-injection tests (ErrorInjection.*)
# The utility/cuBLASLt/error-injection runs pass --report-api-errors no: those tests make CUDA
# calls fail on purpose (out of memory, streams of another context). Racecheck and synccheck
# check only i8gemm's kernels there (--kernel-name kns=i8g), not cuBLASLt's own. The
# out-of-memory test fills the device only to 256 MiB free under a sanitizer
# (I8GEMM_TEST_NO_FULL_HOG=1): the tool needs device memory of its own.
if [ "${SKIP_SANITIZER:-0}" != 1 ] && command -v compute-sanitizer >/dev/null && [ -x "$BUILD/tests/test_gpu" ]; then
  # (MEMCHECK_FILTER / RACECHECK_FILTER, the old names, still work.)
  GEMM_MEMCHECK_FILTER=${GEMM_MEMCHECK_FILTER:-${MEMCHECK_FILTER:-'*GemmOptions*n100_k68*:*GemmTails*n37*:*GemmRows*m65_*:*GemmRows*m3_*:*QuantizeExact*:*GraphSafe.*:*Threads.*:*LargestAllowedK*:SplitK.Alternating*:*GemmKnTensorCore*n80_k80*'}}
  GEMM_RACE_FILTER=${GEMM_RACE_FILTER:-${RACECHECK_FILTER:-'*GemmRows*m17_*:*GemmTails*n1000_k4095*:*GemmTails*n37_k17*:*QuantizeExact*bf16*:*Tp4Correct*down_proj*:SplitK.Alternating*:*GemmKnTensorCore*n1040_k4080*'}}
  DP4A_FILTER=${DP4A_FILTER:-'*GemmRows*m65_nk:*GemmRows*m17_nk:*Tp4Correct*down_proj*_nk:*OnePrepareServesEveryMUpToMaxM'}
  UTIL_FILTER=${UTIL_FILTER:-'*QuantizeExact*per_tensor*:*QuantizeEdges*:*WeightColsum*:CublasLtBucket.*:ErrorInjection.*'}
  san() {  # san NAME LOGNAME TOOL [TOOL OPTIONS...] -- FILTER
    local name=$1 log=$2 tool=$3
    shift 3
    local -a opts=()
    while [ "$1" != -- ]; do opts+=("$1"); shift; done
    shift
    run_suite "$name" "$OUT/$log.log" timeout "$SAN_T" compute-sanitizer --tool "$tool" --error-exitcode 86 \
      "${opts[@]}" "$BUILD/tests/test_gpu" --gtest_filter="$1"
  }
  san "memcheck gemm (dp4a+mma_sync)" memcheck memcheck --leak-check no -- "$GEMM_MEMCHECK_FILTER"
  I8GEMM_FAMILY=simt_dp4a san "memcheck forced simt_dp4a" memcheck_dp4a memcheck --leak-check no -- "$DP4A_FILTER"
  export I8GEMM_TEST_NO_FULL_HOG=1
  san "memcheck util+cuBLASLt+inject" memcheck_util memcheck --leak-check no --report-api-errors no -- "$UTIL_FILTER"
  san "racecheck gemm (dp4a+mma_sync)" racecheck racecheck -- "$GEMM_RACE_FILTER"
  [ "${SKIP_UTIL_RACE:-0}" = 1 ] || san "racecheck util+cuBLASLt+inject" racecheck_util racecheck --report-api-errors no --kernel-name kns=i8g -- "$UTIL_FILTER"
  san "synccheck gemm (dp4a+mma_sync)" synccheck synccheck -- "$GEMM_RACE_FILTER"
  [ "${SKIP_UTIL_RACE:-0}" = 1 ] || san "synccheck util+cuBLASLt+inject" synccheck_util synccheck --report-api-errors no --kernel-name kns=i8g -- "$UTIL_FILTER"
  unset I8GEMM_TEST_NO_FULL_HOG
else
  ROWS+=("$(printf '%-34s %7s %7s %7s  %s' sanitizers - - - skipped)")
fi

# ---- the CPU suites (opt-in here: CI runs them; RUN_CPU_SUITES=1 runs them on this machine) --
for t in "$BUILD"/tests/test_*; do
  [ "${RUN_CPU_SUITES:-0}" = 1 ] || break
  [ -x "$t" ] && [ -f "$t" ] || continue
  name=$(basename "$t")
  [ "$name" = test_gpu ] && continue
  run_suite "$name" "$OUT/$name.log" "$t" --gtest_output="xml:$OUT/$name.xml"
done

# ---- BENCHMARKS ------------------------------------------------------------------------------
# scripts/gpu_bench.sh: tune the shapes, then in one run time what prepare picks, i8gemm's
# cuBLASLt baseline and every peer by the same protocol, and write the report (report.md, .csv,
# .json, .png under $OUT). SKIP_BENCH=1 skips; BENCH_STAGES (default "tune bench peers torch
# report"), SHAPES, MS, SAMPLES, TUNE_SAMPLES choose what runs (gpu_bench.sh's header).
if [ "${SKIP_BENCH:-0}" != 1 ] && [ -x "$BUILD/tools/i8gemm" ]; then
  OUT="$OUT" BUILD="$BUILD" STAGES="${BENCH_STAGES:-tune bench peers torch report}" bash scripts/gpu_bench.sh
  rc=$?; [ "$rc" -ne 0 ] && status=1
  ROWS+=("$(printf '%-34s %7s %7s %7s  %s' "benchmarks" - - - "rc=$rc (gpu_bench.log, report.md)")")
fi
# ---- the experimental wgmma family (docs/wgmma.md): opt-in, WGMMA=1. A tune restricted to
# wgmma candidates verifies each one bit-exact before timing it (rejects are listed in the log)
# and races it against cuBLASLt; run in its own cache so nothing it stores reaches other runs.
if [ "${WGMMA:-0}" = 1 ] && [ -x "$BUILD/tools/i8gemm" ]; then
  echo "=== tune --experimental-wgmma"
  "$BUILD/tools/i8gemm" tune --experimental-wgmma --filter "${WGMMA_FILTER:-_wgmma_}" \
    --shape "${WGMMA_SHAPE:-2560x4096}" --m "${WGMMA_MS:-256,4096}" --samples "${SAMPLES:-20}" \
    --cache "$OUT/wgmma.sqlite" 2>&1 | tee "$OUT/tune_wgmma.log"
  rc=${PIPESTATUS[0]}; [ "$rc" -ne 0 ] && status=1
  ROWS+=("$(printf '%-34s %7s %7s %7s  %s' "tune wgmma" - - - "rc=$rc (table in tune_wgmma.log)")")
fi
# ---- the decode buckets (docs/decode_mma.md): opt-in, DECODE=1. A tune at decode M on the
# target shapes, every family (decode_mma included) and cuBLASLt racing, each candidate verified
# bit-exact first; in its own cache.
if [ "${DECODE:-0}" = 1 ] && [ -x "$BUILD/tools/i8gemm" ]; then
  echo "=== tune at decode M"
  shapes=()
  for s in ${DECODE_SHAPES:-2560x4096 6144x4096 8192x8192 4096x14336}; do shapes+=(--shape "$s"); done
  "$BUILD/tools/i8gemm" tune "${shapes[@]}" --m "${DECODE_MS:-1,16,64}" \
    --samples "${SAMPLES:-20}" --cache "$OUT/decode.sqlite" 2>&1 | tee "$OUT/tune_decode.log"
  rc=${PIPESTATUS[0]}; [ "$rc" -ne 0 ] && status=1
  ROWS+=("$(printf '%-34s %7s %7s %7s  %s' "tune decode" - - - "rc=$rc (table in tune_decode.log)")")
fi
# ---- end of BENCHMARKS -----------------------------------------------------------------------

echo
echo "=== summary (logs in $OUT)"
printf '%-34s %7s %7s %7s  %s\n' suite passed failed skipped note
for r in "${ROWS[@]}"; do echo "$r"; done | tee "$OUT/summary.txt"
exit $status

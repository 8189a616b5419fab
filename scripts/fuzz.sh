#!/usr/bin/env bash
# Builds the libFuzzer harnesses (fuzz/) with clang-14, ASan + UBSan, in build-fuzz/, and runs
# each for a bounded time over its seeds (fuzz/corpus/<harness>/ plus the compiled seeds that
# fuzz_make_seeds writes). One summary line per harness, then "fuzz: N passed, M failed".
#   scripts/fuzz.sh [SECONDS_PER_HARNESS]    (default 20)
# Env: FUZZ_ONLY, a space-separated list of harnesses to run (default: all).
# A finding leaves its input in build-fuzz/fuzz-artifacts/ (reproduce: build-fuzz/fuzz/<harness>
# <file>); once fixed, copy the input into fuzz/corpus/<harness>/ as its regression test.
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-20}
bash scripts/setup.sh
CC=clang-14 CXX=clang++-14 cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DI8GEMM_FUZZ=ON -DI8GEMM_BUILD_TESTS=OFF >/dev/null
cmake --build build-fuzz --target fuzz_all -j"$(nproc)"

B=build-fuzz
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:protect_shadow_gap=0}"
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$PWD/scripts/lsan.supp:print_suppressions=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
[ -d "$B/fuzz-seeds" ] || "$B/fuzz/fuzz_make_seeds" "$B/fuzz-seeds"
mkdir -p "$B/fuzz-logs" "$B/fuzz-artifacts"

harnesses=${FUZZ_ONLY:-"fuzz_kernel_name fuzz_shapes fuzz_ptxas_log fuzz_cubin fuzz_amd_code_object fuzz_llvm_ir fuzz_report fuzz_capi"}
passed=0 failed=0
for h in $harnesses; do
  if [ ! -x "$B/fuzz/$h" ] && [ "$h" = fuzz_llvm_ir ]; then
    echo "fuzz: $h skipped: built only with llvm-15-dev (the AMD IR reader)"; continue
  fi
  corpus="$B/fuzz-corpus/$h"
  mkdir -p "$corpus"
  dirs=("$corpus")
  [ -d "fuzz/corpus/$h" ] && dirs+=("fuzz/corpus/$h")  # harnesses with only compiled seeds have none
  [ -d "$B/fuzz-seeds/$h" ] && dirs+=("$B/fuzz-seeds/$h")
  log="$B/fuzz-logs/$h.log"
  rm -f "$B/fuzz-artifacts/$h-"*
  rc=0
  "$B/fuzz/$h" -max_total_time="$SECS" -error_exitcode=77 -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$B/fuzz-artifacts/$h-" "${dirs[@]}" >"$log" 2>&1 || rc=$?
  execs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' || echo 0)
  crashes=$(find "$B/fuzz-artifacts" -name "$h-*" -type f | wc -l)
  reports=$(grep -cE 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$log" || true)
  if [ "$rc" -eq 0 ] && [ "$crashes" -eq 0 ] && [ "$reports" -eq 0 ]; then
    passed=$((passed + 1)); verdict=ok
  else
    failed=$((failed + 1)); verdict="FAILED (log: $log)"
    tail -40 "$log"
  fi
  printf 'fuzz: %-22s %9s inputs in %ss, corpus %4s files, crashes = %d, sanitizer reports = %d  %s\n' \
    "$h" "$execs" "$SECS" "$(find "$corpus" -type f | wc -l)" "$crashes" "$reports" "$verdict"
done
echo "fuzz: $passed passed, $failed failed"
[ "$failed" -eq 0 ]

#!/usr/bin/env bash
# The CPU test suite under AddressSanitizer + UndefinedBehaviorSanitizer, in build-asan/:
# any sanitizer report aborts the test that hit it (-fno-sanitize-recover=all), so a clean
# ctest run means zero reports. GPU tests skip themselves where no CUDA device is found.
#   scripts/sanitize.sh [CTEST_ARGS...]     e.g. -E 'Compile' to leave tests out
# Env: SANITIZE_EXCLUDE, a ctest -E regex (default: none).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
san="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS="$san -O1" \
  -DCMAKE_CXX_FLAGS="$san -O1" -DCMAKE_EXE_LINKER_FLAGS="$san -Wl,--as-needed" \
  -DCMAKE_SHARED_LINKER_FLAGS="$san -Wl,--as-needed" >/dev/null
cmake --build build-asan -j"$(nproc)"
# (--as-needed: the sanitizer link specs turn it off, and libcuda must stay dlopen-only.)
# NVRTC, comgr and the CUDA driver are not built with ASan: their own leaks and the driver's
# use of the shadow gap are not ours to report.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:protect_shadow_gap=0}"
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$PWD/scripts/lsan.supp:print_suppressions=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
# Excluded by default: AmdCompile.*, whose hipRTC children are forked from compile_all's worker
# threads. Under ASan such a child hung once past its 600 s limit (2026-11-29, CI on 2 cores):
# fork() from a multithreaded process is only async-signal-safe, and the ASan allocator's locks
# are not reset in the child. The plain suite runs these tests; the fix (spawning a helper
# executable instead of forking) is open work.
excl=()
SANITIZE_EXCLUDE=${SANITIZE_EXCLUDE-'^AmdCompile\.'}
[ -n "$SANITIZE_EXCLUDE" ] && excl=(-E "$SANITIZE_EXCLUDE")
ctest --test-dir build-asan --output-on-failure -j"$(nproc)" "${excl[@]}" "$@"

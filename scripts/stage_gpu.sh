#!/usr/bin/env bash
# Builds a Release tree in build-release/ and copies the stripped binaries the GPU pass needs
# into .stage/build/ (same layout as build/), small enough to carry to the GPU machine.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build-release -j"$(nproc)"
rm -rf .stage && mkdir -p .stage/build/tools .stage/build/tests .stage/build/runtime
for f in tools/i8gemm tools/i8gemm_hiprtc_worker tools/example_serving runtime/libi8gemm.so; do
  [ -e "build-release/$f" ] && cp "build-release/$f" ".stage/build/$f"
done
for t in build-release/tests/test_*; do
  [ -x "$t" ] && [ -f "$t" ] && cp "$t" .stage/build/tests/
done
strip --strip-unneeded .stage/build/tools/* .stage/build/tests/* .stage/build/runtime/* 2>/dev/null || true
du -sh .stage

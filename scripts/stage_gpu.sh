#!/usr/bin/env bash
# Builds a Release tree in build-release/ and copies the stripped binaries the GPU pass needs
# into .stage/build/ (same layout as build/), small enough to carry to the GPU machine.
# FROM=build stages an existing tree instead (RelWithDebInfo: same device code, quicker here).
set -euo pipefail
cd "$(dirname "$0")/.."
FROM=${FROM:-build-release}
if [ "$FROM" = build-release ]; then
  cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
cmake --build "$FROM" -j"$(nproc)"
# Only .stage/build is replaced: scripts and shape lists written beside it in .stage/ stay.
rm -rf .stage/build && mkdir -p .stage/build/tools .stage/build/tests .stage/build/runtime .stage/build/bench
for f in tools/i8gemm tools/i8gemm_hiprtc_worker tools/example_serving runtime/libi8gemm.so runtime/libi8gemm.so.0 \
    bench/i8gemm_peers bench/map_encode bench/i8gemm_timeline; do
  [ -e "$FROM/$f" ] && cp -L "$FROM/$f" ".stage/build/$f"  # plain files: links may not travel
done
for t in "$FROM"/tests/test_*; do
  [ -x "$t" ] && [ -f "$t" ] && cp "$t" .stage/build/tests/
done
strip --strip-unneeded .stage/build/tools/* .stage/build/tests/* .stage/build/runtime/* .stage/build/bench/* 2>/dev/null || true
du -sh .stage

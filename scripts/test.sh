#!/usr/bin/env bash
# Set up, build, and run every test. GPU tests skip themselves where no CUDA device is found.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
ctest --test-dir build --output-on-failure -j"$(nproc)"
# The Python package and its torch ops (python/, docs/python.md), installed from this checkout
# into a fresh venv with the binaries just built; SKIP_PYTHON=1 leaves it out.
[ "${SKIP_PYTHON:-0}" = 1 ] || bash scripts/test_python.sh
# Hostile input (docs/reliability.md): the CPU suite again under ASan + UBSan (build-asan/),
# then every libFuzzer harness for FUZZ_SECONDS each (build-fuzz/, clang-14).
# SKIP_SANITIZE=1 / SKIP_FUZZ=1 leave a part out.
[ "${SKIP_SANITIZE:-0}" = 1 ] || bash scripts/sanitize.sh
[ "${SKIP_FUZZ:-0}" = 1 ] || bash scripts/fuzz.sh "${FUZZ_SECONDS:-15}"

#!/usr/bin/env bash
# Set up, build, and run every test. GPU tests skip themselves where no CUDA device is found.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
ctest --test-dir build --output-on-failure -j"$(nproc)"

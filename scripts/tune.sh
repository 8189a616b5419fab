#!/usr/bin/env bash
# The main job: set up, build, and tune the seed TP4 shapes into the default cache
# ($I8GEMM_CACHE, else ~/.cache/i8gemm/cache.sqlite). Without a GPU it compiles and stores
# every candidate for sm_90a; extra arguments go to `i8gemm tune`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
# SASS in the reports: the nvdisasm setup.sh installed, unless the caller chose one (the library
# runs helpers only from explicit configuration, PATH or next to itself).
if [ -z "${I8GEMM_NVDISASM:-}" ] && [ -x .deps/nvdisasm/nvidia/cu13/bin/nvdisasm ]; then
  export I8GEMM_NVDISASM="$PWD/.deps/nvdisasm/nvidia/cu13/bin/nvdisasm"
fi
./build/tools/i8gemm tune --compile-only --arch sm_90a --shapes examples/tp4.shapes "$@"
./build/tools/i8gemm inspect

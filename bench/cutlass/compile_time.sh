#!/usr/bin/env bash
# How long one CUTLASS sm90 int8 kernel of this peer takes to compile (device code only: the
# front end, NVVM and ptxas that NVRTC also runs), per phase (nvcc --time), on one core. The
# measure behind issue 12's choice between CuTe/CUTLASS headers under NVRTC and our own PTX
# wrappers (docs/wgmma_tma.md, "NVRTC compile time").
#   bash bench/cutlass/compile_time.sh [SPEC ...]   (indices into configs.hpp's kSpecs; default 4 0)
# Env: CUTLASS_DIR (default .deps/cutlass, as scripts/setup.sh fills it), NVCC (default nvcc on
# PATH, else /usr/local/cuda/bin/nvcc), CPU (the core to pin to, default 0).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
C=${CUTLASS_DIR:-$root/.deps/cutlass}
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
[ -x "$NVCC" ] || { echo "compile_time.sh: no nvcc ($NVCC)" >&2; exit 2; }
[ -f "$C/include/cutlass/gemm/collective/collective_builder.hpp" ] ||
  { echo "compile_time.sh: no CUTLASS headers at $C (run scripts/setup.sh)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/one.cu" <<'CU'
#include "kernel.cuh"
using K = i8g::peers::detail::ScaledMm<SPEC>::Kernel;
template __global__ void cutlass::device_kernel<K>(CUTLASS_GRID_CONSTANT typename K::Params const);
CU
[ $# -gt 0 ] || set -- 4 0
for s in "$@"; do
  TIMEFORMAT='%R %U %S'
  { time taskset -c "${CPU:-0}" "$NVCC" --time "$tmp/t.csv" -arch=sm_90a -cubin -std=c++17 -O3 -DNDEBUG \
    -DCUTLASS_ENABLE_GDC_FOR_SM90 -DSPEC="$s" --expt-relaxed-constexpr -I"$root/bench/cutlass" -I"$C/include" \
    -I"$C/tools/util/include" "$tmp/one.cu" -o "$tmp/one.cubin" 2>"$tmp/err"; } 2>"$tmp/time" ||
    { cat "$tmp/err" >&2; echo "compile_time.sh: spec $s did not compile" >&2; exit 1; }
  read -r wall user sys <"$tmp/time"
  name=$(sed -n "/kSpecs\[\] = {/,/};/p" "$root/bench/cutlass/configs.hpp" | grep '{"' | sed -n "$((s + 1))p" | cut -d'"' -f2)
  printf 'spec %s (%s): %.1f s wall, %.1f s CPU (user + sys);' "$s" "$name" "$wall" "$(awk "BEGIN {print $user + $sys}")"
  awk -F' , ' '$2 ~ /cicc|ptxas|preprocessing/ {printf " %s %.1f s;", $2, $7 / 1000}' "$tmp/t.csv"
  echo
  rm -f "$tmp/t.csv"
done

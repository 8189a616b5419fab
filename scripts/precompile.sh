#!/usr/bin/env bash
# Compiles every candidate kernel of the shapes on this (CPU) machine and packs the cache for a
# GPU machine, so its tune only times: `tune` finds each kernel by its binary key (name, arch,
# NVRTC version, source and options hashes), which does not name the host. Session 29: the 1436
# candidates of TP4 + Llama-3-8B compiled here in 121 s on 2 cores (the H200 host's tune spent
# 50-117 s per shape compiling); the H200's tune then found all of them ("205/205 done in 1.4 s").
#   SHAPES="examples/tp4.shapes examples/llama3-8b.shapes" OUTFILE=.stage/pre.sqlite.xz bash scripts/precompile.sh
# Env: BUILD (the tree whose tools/i8gemm compiles: its templates are the kernels'; default
# build; precompile with the very build you stage: the key's generator hash covers the templates
# and the generator's sources, so a generator change after the precompile makes the GPU's tune
# compile every candidate again), SHAPES, ARCH (sm_90a), OUTFILE (an .xz of the cache, default
# .stage/pre.sqlite.xz; .sqlite writes the cache uncompressed), TUNE_FLAGS (the same candidate flags the GPU tune will
# use, e.g. --experimental-packed-weight or --filter REGEX). Then on the GPU machine:
#   PRECOMPILED=.stage/pre.sqlite.xz bash scripts/gpu_bench.sh   (carry the file)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
SHAPES=${SHAPES:-examples/tp4.shapes examples/llama3-8b.shapes}
OUTFILE=${OUTFILE:-.stage/pre.sqlite.xz}
tmp=$(mktemp -d /tmp/precompile.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cat $SHAPES > "$tmp/shapes"
# shellcheck disable=SC2086
"$BUILD/tools/i8gemm" tune --compile-only --arch "${ARCH:-sm_90a}" --shapes "$tmp/shapes" --cache "$tmp/c.sqlite" \
  ${TUNE_FLAGS:-}
mkdir -p "$(dirname "$OUTFILE")"
python3 scripts/cache_file.py pack "$tmp/c.sqlite" "$OUTFILE"
ls -l "$OUTFILE"

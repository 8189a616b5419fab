#!/usr/bin/env bash
# A/B of two builds' kernels, on the GPU machine: the same tune points for build A and build B
# (staged trees: scripts/stage_gpu.sh's layout, tools/i8gemm and runtime/), REPS times with the
# builds alternating, each tune over the candidates FILTER selects (every one verified bit-exact
# by the tuner before it is timed), then scripts/ab_report.py's table: per point the best kernel of
# each build, B / A, cuBLASLt's B / A as a control for drift, and B / A per kernel.
#   A=.stage/old B=.stage/build POINTS="2560x4096:256 6144x4096:128" FILTER='wgmma_tma.*_sk1$' \
#     bash scripts/gpu_ab.sh
# Env: OUT (default /tmp/out), REPS (2), SAMPLES (20), TUNE_FLAGS (more `tune` flags, e.g.
# "--bias --out f32"), STEP_TIMEOUT (seconds per tune, 100), PRE_A / PRE_B (each build's
# candidates precompiled by scripts/precompile.sh, .sqlite or .xz: every rep's cache starts from it), KEEP (set: the
# tuned caches $OUT/ab/{A,B}_REP.sqlite stay). Writes $OUT/ab/: tune and race logs
# per build and rep, ab.md (the table). Exit status: non-zero when a tune failed or no table.
set -uo pipefail
cd "$(dirname "$0")/.."
: "${A:?A: build A's staged tree}" "${B:?B: build B's staged tree}" "${POINTS:?POINTS: NxK:M ...}"
: "${FILTER:?FILTER: the candidates to race (a tune --filter regex)}"
OUT=${OUT:-/tmp/out}
REPS=${REPS:-2}
SAMPLES=${SAMPLES:-20}
R="$OUT/ab"
mkdir -p "$R"
status=0
for rep in $(seq 1 "$REPS"); do
  for V in A B; do
    tree=${!V}
    # PRE_A / PRE_B: that build's candidates compiled elsewhere (scripts/precompile.sh with BUILD=
    # its tree and TUNE_FLAGS="--filter ..."), so the tunes here only time
    pre=PRE_$V
    if [ -n "${!pre:-}" ]; then
      python3 scripts/cache_file.py unpack "${!pre}" "$R/${V}_$rep.sqlite" || status=1
    fi
    for point in $POINTS; do
      shape=${point%:*} m=${point#*:}
      # shellcheck disable=SC2086
      LD_LIBRARY_PATH="$PWD/$tree/runtime" timeout "${STEP_TIMEOUT:-100}" "$tree/tools/i8gemm" tune --shape "$shape" \
        --m "$m" --samples "$SAMPLES" --filter "$FILTER" ${TUNE_FLAGS:-} --cache "$R/${V}_$rep.sqlite" \
        > "$R/tune_${V}_${rep}_${shape}_$m.txt" 2>&1 || { echo "tune $V rep $rep $point: rc=$?"; status=1; }
    done
    LD_LIBRARY_PATH="$PWD/$tree/runtime" "$tree/tools/i8gemm" inspect race --cache "$R/${V}_$rep.sqlite" \
      > "$R/race_${V}_$rep.txt" 2>&1 || status=1
    [ -n "${KEEP:-}" ] || rm -f "$R/${V}_$rep.sqlite"*  # KEEP=1: keep the tuned caches (for a peers run after)
  done
done
python3 scripts/ab_report.py "$R" > "$R/ab.md" || status=1
cat "$R/ab.md"
exit $status

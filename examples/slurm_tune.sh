#!/usr/bin/env bash
# One shard of a fleet tune as a Slurm array task (README, "Tuning on many GPUs"):
#   sbatch --array=0-7 examples/slurm_tune.sh examples/llama3-70b.shapes
# Each task tunes share $SLURM_ARRAY_TASK_ID of $SLURM_ARRAY_TASK_COUNT of the (shape, M)
# buckets on the GPUs Slurm gave it into its own cache; merge them afterwards with
#   i8gemm cache merge tuned.sqlite shard-*.sqlite
#SBATCH --job-name=i8gemm-tune
#SBATCH --gpus-per-task=1
#SBATCH --time=02:00:00
set -euo pipefail
shapes=${1:?"usage: sbatch --array=0-N examples/slurm_tune.sh SHAPES_FILE [tune flags...]"}
shift
id=${SLURM_ARRAY_TASK_ID:?"run as a Slurm array task (sbatch --array=...)"}
n=${SLURM_ARRAY_TASK_COUNT:?"run as a Slurm array task (sbatch --array=...)"}
i=$((id - ${SLURM_ARRAY_TASK_MIN:-0}))  # --array=1-8 works as well as 0-7 (contiguous ranges)
# Several GPUs in one task: one tune job per GPU inside this task's share.
devices=all
exec i8gemm tune --shapes "$shapes" --shard "$i/$n" --devices "$devices" \
  --cache "${I8GEMM_SHARD_DIR:-.}/shard-$i.sqlite" "$@"

#!/usr/bin/env bash
# Issue 16's GPU check, on the GPU machine over a build made elsewhere: the TP4 shapes tuned by
# one job, then by two jobs (two devices with --devices when the host has two; else two --shard
# jobs one after the other, simulating two hosts, which says so, and then `--devices all` over
# a copy of the one-job cache, so the spawning path runs too), their caches merged; the winners must
# agree within the tie rule (same candidate, or times within TIE of each other, since two
# timings of one kernel differ by noise), and the wall times are printed.
#   OUT=/tmp/out BUILD=build bash scripts/gpu_fleet_check.sh
# Env: OUT, BUILD, SHAPES (default examples/tp4.shapes), MS (default 1,16,256,4096), SAMPLES
# (default 20), TIE (default 0.05: 5%, the run-to-run noise of one kernel between processes).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}
BUILD=${BUILD:-build}
SHAPES=${SHAPES:-examples/tp4.shapes}
MS=${MS:-1,16,256,4096}
SAMPLES=${SAMPLES:-20}
TIE=${TIE:-0.05}
CLI="$BUILD/tools/i8gemm"
export LD_LIBRARY_PATH="$PWD/$BUILD/runtime${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
mkdir -p "$OUT/fleet"
F=$OUT/fleet
rm -f "$F"/*.sqlite*
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
common=(tune --shapes "$SHAPES" --m "$MS" --samples "$SAMPLES")

t0=$(date +%s)
"$CLI" "${common[@]}" --cache "$F/one.sqlite" >"$F/one.log" 2>&1 || { echo "one-job tune failed (see $F/one.log)"; exit 1; }
t1=$(date +%s)
if [ "${gpus:-0}" -ge 2 ]; then
  how="--devices 0,1 (two GPUs)"
  "$CLI" "${common[@]}" --devices 0,1 --cache "$F/two.sqlite" >"$F/two.log" 2>&1
  rc=$?
  two_s=$(($(date +%s) - t1))
else
  # One GPU: two hosts simulated by running the two shards one after the other, each with the
  # whole machine (CPUs for its compiles, the GPU for its timings); a two-host run would take
  # the longer of the two.
  how="two --shard jobs, one after the other on this one-GPU host (two hosts simulated: wall = the longer job)"
  ts0=$(date +%s)
  "$CLI" "${common[@]}" --shard 0/2 --cache "$F/s0.sqlite" >"$F/s0.log" 2>&1
  r0=$?
  ts1=$(date +%s)
  "$CLI" "${common[@]}" --shard 1/2 --cache "$F/s1.sqlite" >"$F/s1.log" 2>&1
  r1=$?
  ts2=$(date +%s)
  rc=$((r0 || r1))
  [ $rc -eq 0 ] && "$CLI" cache merge "$F/two.sqlite" "$F/s0.sqlite" "$F/s1.sqlite" >"$F/merge.log" 2>&1 || rc=1
  two_s=$(( ts1 - ts0 > ts2 - ts1 ? ts1 - ts0 : ts2 - ts1 ))  # the longer job
fi
[ $rc -eq 0 ] || { echo "two-job tune failed ($how; logs in $F)"; exit 1; }
grep -h "bucket .* done" "$F"/two.log "$F"/s*.log 2>/dev/null | tail -4

"$CLI" inspect winners --json --cache "$F/one.sqlite" >"$F/one.json"
"$CLI" inspect winners --json --cache "$F/two.sqlite" >"$F/two.json"
others=("$F/two.json")
if [ "${gpus:-0}" -lt 2 ]; then
  # --devices itself (the parent spawning a child job per device) on this host's one GPU: one
  # job, over a copy of the one-job cache's kernels (no compile), timing every bucket again.
  "$CLI" cache merge "$F/dev.sqlite" "$F/one.sqlite" >"$F/dev_merge.log" 2>&1 &&
    "$CLI" "${common[@]}" --devices all --cache "$F/dev.sqlite" >"$F/dev.log" 2>&1 ||
    { echo "--devices all failed (see $F/dev.log)"; exit 1; }
  grep -E "^device |exited|bucket .* done" "$F/dev.log" | tail -3
  "$CLI" inspect winners --json --cache "$F/dev.sqlite" >"$F/dev.json"
  others+=("$F/dev.json")
fi
python3 - "$TIE" "$how" "$((t1 - t0))" "$two_s" "$F/one.json" "${others[@]}" <<'EOF'
import json, sys
tie, how, s1, s2 = float(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
one = json.load(open(sys.argv[5]))["winners"]
key = lambda w: (w["problem"], w["m_bucket"], w["gpu"])
a = {key(w): w for w in one}
bad = 0
for path in sys.argv[6:]:
  b = {key(w): w for w in json.load(open(path))["winners"]}
  print(f"\n{path}: against the one job's winners")
  print(f"| problem | M | one job | us | this run | us | agree |")
  print(f"|---|---|---|---|---|---|---|")
  for k in sorted(set(a) | set(b)):
      x, y = a.get(k), b.get(k)
      if not x or not y:
          bad += 1
          print(f"| {k[0]} | {k[1]} | {x and x['winner']} | | {y and y['winner']} | | missing |")
          continue
      same = x["winner"] == y["winner"]
      close = abs(x["time_us"] - y["time_us"]) <= tie * min(x["time_us"], y["time_us"])
      ok = same or close
      bad += not ok
      print(f"| {k[0]} | {k[1]} | {x['winner'][-40:]} | {x['time_us']:.2f} | {y['winner'][-40:]} | {y['time_us']:.2f} | "
            f"{'same' if same else ('within tie' if close else 'NO')} |")
print(f"\n{len(a)} buckets; one job {s1} s, two jobs ({how}) {s2} s; disagreements: {bad}")
sys.exit(1 if bad else 0)
EOF

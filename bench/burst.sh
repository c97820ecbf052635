#!/usr/bin/env bash
# burst against gang on this machine, side by side in one run: 2 ranks, mlp and lenet at global
# batch 32 and 64, three configurations each: gang, burst as the planner plans it, and burst with
# the fully connected layers forced onto rank 0. Per run: samples/s (median, summary.json), each
# rank's compute (busy) and the rest of the step (idle or waiting) from trace.h5 over the traced
# steps, and the planner's predicted step against the measured one: for the planned run the
# prediction it logged (its own profile and ping-pong link), else wavetrain --show-plan on that
# profile and this machine's probed link (gang: the planner's price of data parallelism).
#   bench/burst.sh [--steps-mlp N] [--steps-lenet N] [--out DIR]
# Runs on a quiet machine: every number here is a ratio or a time measured in the same minute.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
build="$here/build"
steps_mlp=2000
steps_lenet=200
out=""
while [[ $# -gt 0 ]]; do
  case $1 in
    --steps-mlp) steps_mlp=$2; shift 2 ;;
    --steps-lenet) steps_lenet=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n 2,9p "$0"; exit 0 ;;
    *) echo "burst.sh: unknown option $1 (--help)" >&2; exit 2 ;;
  esac
done
out=${out:-$(mktemp -d "${TMPDIR:-/tmp}/wt-burst.XXXXXX")}
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none
mpiexec -n 2 "$build/probe_device" > "$out/this_machine.toml"
data="$here/data/fashion_mnist.h5"

# Nodes of the fully connected layers on rank 0, the rest on both ranks.
declare -A fc_on_rank0=([mlp]="[2,1,1,1,1,1,1]" [lenet]="[2,2,2,2,2,2,2,1,1,1,1]")

# One run; prints "samples/s busy0 busy1 step_ms" (busy: compute ms per step from the trace).
run() {  # name deck steps batch [--set ...]
  local name=$1 deck=$2 steps=$3 batch=$4
  shift 4
  mpiexec -n 2 "$build/wavetrain" "$here/inputs/$deck" --run-dir "$out/$name" --steps "$steps" \
    --quiet --set "data.path=\"$data\"" --set train.eval_every_epoch=false \
    --set "train.global_batch=$batch" --set train.log_every_steps=50 --set trace.enabled=true \
    --set "trace.start_step=$((steps - 20))" --set "trace.end_step=$steps" "$@" \
    > "$out/$name.log" 2>&1 || { cat "$out/$name.log"; exit 1; }
  /usr/bin/python3 - "$here/analysis" "$out/$name" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[1])
import wtrun
run = sys.argv[2]
rate = json.load(open(run + "/summary.json"))["samples_per_s_median"]
trace = wtrun.load_trace(run)
busy = []
for r in sorted(trace.ranks):
    ev = trace.ranks[r].events
    steps = max(1, len(set(int(s) for s in ev["step"])))
    busy.append(1e3 * sum(e - b for n, b, e in zip(ev["name"], ev["begin"], ev["end"])
                          if wtrun.op_class(n) == "compute") / steps)
print(f"{rate:.0f} {busy[0]:.3f} {busy[1]:.3f}")
PY
}

# The planner's predicted step (ms) for a configuration, on the planned run's profile.
predict() {  # deck batch profile [--set ...]
  local deck=$1 batch=$2 profile=$3
  shift 3
  "$build/wavetrain" "$here/inputs/$deck" --show-plan --ranks 2 --device "$out/this_machine.toml" \
    --profile "$profile" --set "train.global_batch=$batch" "$@"
}

echo "2 ranks, $(nproc) cores; results in $out"
echo "| model | batch | config | plan (nodes on ranks) | samples/s | vs gang | step ms | predicted ms | error | busy ms r0 / r1 | idle ms r1 |"
echo "|---|---:|---|---|---:|---:|---:|---:|---:|---|---:|"
for model in mlp lenet; do
  steps=$([[ $model == mlp ]] && echo "$steps_mlp" || echo "$steps_lenet")
  for batch in 32 64; do
    deck="fashion_$model.toml"
    declare -A row=()
    gang_rate=""
    for config in planned gang forced; do  # planned first: its run measures profile.h5
      name="${model}_${batch}_$config"
      case $config in
        gang) sets=(--set schedule.kind=gang) ;;
        planned) sets=(--set schedule.kind=burst) ;;
        forced) sets=(--set schedule.kind=burst --set "burst.ranks=${fc_on_rank0[$model]}") ;;
      esac
      read -r rate busy0 busy1 <<<"$(run "$name" "$deck" "$steps" "$batch" "${sets[@]}")"
      [[ $config == gang ]] && gang_rate=$rate
      profile="$out/${model}_${batch}_planned/profile.h5"
      if [[ $config == gang ]]; then
        plan="all on 2"
        predicted=$(predict "$deck" "$batch" "$profile" | awk '/^data parallel/ { print $6 }')
      elif [[ $config == planned ]]; then  # what the run planned and predicted for itself
        plan=$(sed -n 's/.*burst segments: //p' "$out/$name/log.txt")
        predicted=$(sed -n 's/.*burst plan: predicted step \([0-9.]*\) ms.*/\1/p' "$out/$name/log.txt")
      else
        shown=$(predict "$deck" "$batch" "$profile" --set "burst.ranks=${fc_on_rank0[$model]}")
        plan=$(awk '/^segments:/ { sub(/^segments: /, ""); print }' <<<"$shown")
        predicted=$(awk '/^predicted step/ { print $3 }' <<<"$shown")
      fi
      row[$config]="$plan|$rate|$predicted|$busy0|$busy1"
    done
    for config in gang planned forced; do
      IFS='|' read -r plan rate predicted busy0 busy1 <<<"${row[$config]}"
      awk -v m="$model" -v b="$batch" -v c="$config" -v p="$plan" -v r="$rate" -v g="$gang_rate" \
        -v pr="$predicted" -v b0="$busy0" -v b1="$busy1" 'BEGIN {
          step = 1e3 * b / r;
          printf "| %s | %d | %s | %s | %d | %.2f | %.3f | %.3f | %+.0f%% | %.3f / %.3f | %.3f |\n",
            m, b, c, p, r, r / g, step, pr, 100 * (pr - step) / step, b0, b1, step - b1 }'
    done
  done
done

#!/usr/bin/env bash
# Which burst cost model (burst.cost_model: executor or deeppool) predicts this machine: 2 ranks,
# mlp and lenet, each configuration measured side by side in rounds (median samples/s of the
# rounds): gang, burst with the fully connected layers forced onto rank 0, and burst as each cost
# model plans it. Every measured plan is then priced by both models (wavetrain --show-plan with
# burst.ranks forcing the plan) on the executor-planned run's measured profile and link (the
# ping-pong it logged, in this machine's device file from tools/probe_device), against the
# measured step.
#   bench/burst_cost_models.sh [--rounds N] [--steps-mlp N] [--steps-lenet N] [--batch B] [--out DIR]
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
build="$here/build"
rounds=3 steps_mlp=1000 steps_lenet=100 batch=64 out=""
while [[ $# -gt 0 ]]; do
  case $1 in
    --rounds) rounds=$2; shift 2 ;;
    --steps-mlp) steps_mlp=$2; shift 2 ;;
    --steps-lenet) steps_lenet=$2; shift 2 ;;
    --batch) batch=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n 2,8p "$0"; exit 0 ;;
    *) echo "burst_cost_models.sh: unknown option $1 (--help)" >&2; exit 2 ;;
  esac
done
out=${out:-$(mktemp -d "${TMPDIR:-/tmp}/wt-costmodels.XXXXXX")}
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none
mpiexec --oversubscribe -n 2 "$build/probe_device" > "$out/this_machine.toml"
data="$here/data/fashion_mnist.h5"
declare -A fc_on_rank0=([mlp]="[2,1,1,1,1,1,1]" [lenet]="[2,2,2,2,2,2,2,1,1,1,1]")

run() {  # name deck steps [--set ...]: prints samples/s (median over the run's steps)
  local name=$1 deck=$2 steps=$3
  shift 3
  rm -rf "$out/$name"
  mpiexec --oversubscribe -n 2 "$build/wavetrain" "$here/inputs/$deck" --run-dir "$out/$name" \
    --steps "$steps" --quiet --set "data.path=\"$data\"" --set train.eval_every_epoch=false \
    --set "train.global_batch=$batch" --set train.log_every_steps=50 "$@" \
    > "$out/$name.log" 2>&1 || { cat "$out/$name.log" >&2; exit 1; }
  /usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["samples_per_s_median"])' \
    "$out/$name/summary.json"
}

# "[0..2] on 2 [3..6] on 1" -> "[2,2,2,1,1,1,1]"
node_counts() {
  /usr/bin/python3 -c 'import re,sys
c=[]
for a,b,g in re.findall(r"\[(\d+)\.\.(\d+)\] on (\d+)", sys.argv[1]): c += [g]*(int(b)-int(a)+1)
print("[" + ",".join(c) + "]")' "$1"
}

# The device file with the link a planned run measured and logged ("link 0.6 us + 1.89 GB/s").
link_device() {  # log file -> device file
  local alpha beta
  read -r alpha beta < <(sed -n 's/.*(link \([0-9.e+-]*\) us + \([0-9.e+-]*\) GB\/s).*/\1 \2/p' "$1")
  sed -e "s/^intra_alpha_s = .*/intra_alpha_s = ${alpha}e-6/" -e "s/^inter_alpha_s = .*/inter_alpha_s = ${alpha}e-6/" \
    -e "s/^intra_bytes_per_s = .*/intra_bytes_per_s = ${beta}e9/" \
    -e "s/^inter_bytes_per_s = .*/inter_bytes_per_s = ${beta}e9/" "$out/this_machine.toml" \
    > "$out/link.toml"
}

price() {  # deck model ranks-list profile: predicted ms
  "$build/wavetrain" "$here/inputs/$1" --show-plan --ranks 2 --device "$out/link.toml" \
    --profile "$4" --set "train.global_batch=$batch" --set "burst.cost_model=$2" \
    --set "burst.ranks=$3" | awk '/^predicted step/ { s = $3 } /^optimizer step/ { o = $3 }
      END { print s, s + o }'
}

echo "2 ranks, $(nproc) cores, global batch $batch, median of $rounds rounds; runs in $out"
echo "| model | configuration | plan (nodes on ranks) | measured step ms | executor predicts | error | executor + optimizer step (the simulator's) | error | deeppool predicts | error |"
echo "|---|---|---|---:|---:|---:|---:|---:|---:|---:|"
for model in mlp lenet; do
  deck="fashion_$model.toml"
  steps=$([[ $model == mlp ]] && echo "$steps_mlp" || echo "$steps_lenet")
  configs=(planned_executor planned_deeppool gang forced)
  declare -A rates=()
  for ((round = 1; round <= rounds; round++)); do
    for config in "${configs[@]}"; do
      case $config in
        planned_*) sets=(--set schedule.kind=burst --set "burst.cost_model=${config#planned_}") ;;
        gang) sets=(--set schedule.kind=gang) ;;
        forced) sets=(--set schedule.kind=burst --set "burst.ranks=${fc_on_rank0[$model]}") ;;
      esac
      rates[$config]+=" $(run "${model}_${config}_$round" "$deck" "$steps" "${sets[@]}")"
    done
  done
  profile="$out/${model}_planned_executor_1/profile.h5"
  link_device "$out/${model}_planned_executor_1/log.txt"
  echo "| $model | (link of the executor-planned run: $(sed -n 's/.*(link \(.*\)).*/\1/p' "$out/${model}_planned_executor_1/log.txt")) | | | | | | | | |"
  for config in "${configs[@]}"; do
    case $config in
      planned_*) plan=$(sed -n 's/.*burst segments: //p' "$out/${model}_${config}_1/log.txt")
                 ranks=$(node_counts "$plan") ;;
      gang) ranks=$(node_counts "[0..$(( $(grep -c '^\[\[layer\]\]' "$here/models/$model.toml") - 1 ))] on 2")
            plan="all on 2" ;;
      forced) ranks=${fc_on_rank0[$model]} plan=$ranks ;;
    esac
    rate=$(tr ' ' '\n' <<<"${rates[$config]}" | grep . | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
    read -r executor with_step < <(price "$deck" executor "$ranks" "$profile")
    read -r deeppool _ < <(price "$deck" deeppool "$ranks" "$profile")
    awk -v m="$model" -v c="$config" -v p="$plan" -v r="$rate" -v b="$batch" -v e="$executor" \
      -v x="$with_step" -v d="$deeppool" 'BEGIN { step = 1e3 * b / r;
        printf "| %s | %s | %s | %.3f | %.3f | %+.0f%% | %.3f | %+.0f%% | %.3f | %+.0f%% |\n", m, c,
          p, step, e, 100 * (e - step) / step, x, 100 * (x - step) / step, d, 100 * (d - step) / step }'
  done
  unset rates
done

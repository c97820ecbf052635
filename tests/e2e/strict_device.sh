#!/usr/bin/env bash
# The strict device (device.kind = "strict": the host's kernels under a GPU's rules) trains
# bitwise the same model as the host device under every schedule: gang, pipeline (4
# microbatches), waves and ticktock on 2 MPI ranks, plus lenet (convolutions, pooling, batch
# norm) under gang, the text transformer (embeddings, attention, layer norm) under gang and
# ticktock (two waves' streams; it once failed on strict), and burst (mlp
# and lenet, rows moved between segments). The checkpoints' weights, optimizer state and kept
# gradients must match bit for bit, and so must the losses in metrics.csv, under each of three
# strict stream orders (device.strict_seed). A strict run resumed from its checkpoint (staged back
# in) also matches. Every strict run's host waits for the device once per step.
source "$(dirname "$0")/lib/common.bash"
fashion=$(fashion_mnist_h5)
kjv="$WT_SOURCE_DIR/data/kjv.h5"
same_weights() { "$WT_PYTHON" "$WT_SOURCE_DIR/tests/e2e/lib/same_weights.py" "$@"; }
losses() { awk -F, '$1=="train" || $1=="eval" { print $1, $2, $4, $5 }' "$1/metrics.csv"; }

run() {  # name device deck data schedule steps [extra args...]
  local name=$1 device=$2 deck=$3 data=$4 kind=$5 steps=$6
  shift 6
  mpiexec -n 2 --oversubscribe "$WAVETRAIN" "$WT_SOURCE_DIR/inputs/$deck" --quiet \
    --set "data.path=\"$data\"" --set "schedule.kind=\"$kind\"" --set schedule.microbatches=4 \
    --set "device.kind=\"$device\"" --set checkpoint.every_steps=15 --set train.log_every_steps=5 \
    --steps "$steps" --run-dir "$dir/$name" "$@" >"$dir/$name.txt" 2>&1 ||
    { cat "$dir/$name.txt"; fail "$name: exit status $?"; }
}

# A GPU host waits for the device once per step (the step's results, one copy back): the strict
# device counts every time host code waited for it.
one_wait_per_step() {  # name
  local waits
  waits=$(grep -o '"device_synchronizations_per_step": [0-9]*' "$dir/$1/summary.json" | grep -o '[0-9]*$')
  [[ $waits == 1 ]] || fail "$1: the host waited for the device ${waits:-?} times in a step, expected 1"
}

compare() {  # name-a name-b step
  local ckpt
  ckpt=$(printf 'checkpoints/step_%08d.h5' "$3")
  same_weights "$dir/$1/$ckpt" "$dir/$2/$ckpt" || fail "$2: weights differ from $1"
  diff <(losses "$dir/$1") <(losses "$dir/$2") || fail "$2: losses differ from $1"
}

cases=("mlp-gang fashion_mlp.toml $fashion gang"
       "mlp-pipeline fashion_mlp.toml $fashion pipeline"
       "mlp-waves fashion_mlp.toml $fashion waves"
       "mlp-ticktock fashion_mlp.toml $fashion ticktock"
       "lenet-gang fashion_lenet.toml $fashion gang")
[[ -f "$kjv" ]] && cases+=("transformer-gang text_transformer.toml $kjv gang"
                            "transformer-ticktock text_transformer.toml $kjv ticktock")
for c in "${cases[@]}"; do
  read -r name deck data kind <<<"$c"
  run "$name-host" host "$deck" "$data" "$kind" 30
  for seed in 1 2 3; do
    run "$name-strict$seed" strict "$deck" "$data" "$kind" 30 --set device.strict_seed=$seed
    compare "$name-host" "$name-strict$seed" 30
    one_wait_per_step "$name-strict$seed"
  done
  echo "ok: $name: strict == host bitwise after 30 steps, strict seeds 1, 2, 3; one wait per step"
done

# burst with rows moving between segments (forced plans: the planner's would follow measured
# times, which differ between runs).
for c in "mlp fashion_mlp.toml [2,2,2,1,1,1,1]" "lenet fashion_lenet.toml [2,2,2,2,2,2,2,1,1,1,1]"; do
  read -r name deck plan <<<"$c"
  run "$name-burst-host" host "$deck" "$fashion" burst 30 --set "burst.ranks=$plan"
  for seed in 1 2 3; do
    run "$name-burst-strict$seed" strict "$deck" "$fashion" burst 30 --set "burst.ranks=$plan" \
      --set device.strict_seed=$seed
    compare "$name-burst-host" "$name-burst-strict$seed" 30
    one_wait_per_step "$name-burst-strict$seed"
  done
  echo "ok: $name-burst: strict == host bitwise after 30 steps, strict seeds 1, 2, 3"
done

# Resume on the strict device: parameters, optimizer state and ticktock's kept gradients are
# staged back into device memory; the result is still the host's.
run resumed strict fashion_mlp.toml "$fashion" ticktock 15
run resumed strict fashion_mlp.toml "$fashion" ticktock 30 --restart
same_weights "$dir/mlp-ticktock-host/checkpoints/step_00000030.h5" \
  "$dir/resumed/checkpoints/step_00000030.h5" || fail "resumed strict run differs from host"
echo "ok: a strict run resumed at step 15 matches the host's 30 steps bitwise"

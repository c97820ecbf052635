#!/usr/bin/env bash
# Waterwave co-location (issue 20): a deck whose [colocate] decks lists three jobs (lenet at two
# learning rates, and mlp) trains them together on one device in paired rounds: each job into its
# own run directory, its console lines prefixed with its name; each job's weights after 20 steps
# are bitwise those of its deck trained alone (co-location only reorders independent work); a
# budget too small for one job's weights exits 3 before training; bad co-location decks exit 2
# naming the file, line and key (a sub-deck's error names the sub-deck).
source "$(dirname "$0")/lib/common.bash"
data=$(fashion_mnist_h5)
python=${WT_PYTHON:-/usr/bin/python3}

job_deck() {  # file, run name, model, lr
  cat >"$1" <<DECK
[run]
name = "$2"
output_dir = "$dir/alone"
[data]
path = "$data"
preload = false
[model]
file = "$WT_SOURCE_DIR/models/$3"
[optimizer]
kind = "sgd"
lr = $4
[train]
global_batch = 32
eval_every_epoch = false
DECK
}
job_deck "$dir/lr_0.01.toml" lenet_lr0.01 lenet.toml 0.01
job_deck "$dir/lr_0.03.toml" lenet_lr0.03 lenet.toml 0.03
job_deck "$dir/mlp.toml" mlp mlp.toml 0.05
cat >"$dir/hpo.toml" <<DECK
[run]
name = "hpo"
output_dir = "$dir/runs"
[colocate]
decks = ["lr_0.01.toml", "lr_0.03.toml", "mlp.toml"]
split_bytes = 300000
[device]
memory_limit = 200000000
DECK

"$WAVETRAIN" "$dir/hpo.toml" --steps 20 >"$dir/together.out" 2>&1 || { cat "$dir/together.out"; fail "co-located run failed"; }
cat "$dir/together.out"
for job in lenet_lr0.01 lenet_lr0.03 mlp; do
  run="$dir/runs/hpo/$job"
  [[ -f $run/metrics.csv && -f $run/log.txt && -f $run/checkpoints/step_00000020.h5 ]] ||
    fail "$job: no metrics, log or step-20 checkpoint in $run"
  grep -q "^\[$job\] wavetrain: done: 20 steps" "$dir/together.out" || fail "$job: no prefixed final line"
  "$WAVETRAIN" "$dir/${job/lenet_lr/lr_}.toml" --steps 20 --quiet >/dev/null 2>&1 ||
    [[ $job == mlp ]] || fail "$job alone failed"
done
# mlp again, its errors shown this time: into the directory the loop's mlp run wrote, so it says
# --overwrite (an earlier run is never written over silently).
"$WAVETRAIN" "$dir/mlp.toml" --steps 20 --quiet --overwrite >/dev/null || fail "mlp alone failed"
"$python" - "$dir" <<'PY' || fail "a co-located job's weights differ from its deck trained alone"
import sys, h5py, numpy as np
d = sys.argv[1]
for job in ("lenet_lr0.01", "lenet_lr0.03", "mlp"):
    step = "checkpoints/step_00000020.h5"
    a = h5py.File(f"{d}/runs/hpo/{job}/{step}", "r")["stages/0/values"][:]
    b = h5py.File(f"{d}/alone/{job}/{step}", "r")["stages/0/values"][:]
    same = a.tobytes() == b.tobytes()
    print(job, a.size, "parameters, bitwise equal" if same else "DIFFER")
    if not same:
        sys.exit(1)
PY

bad() {  # file, [colocate] lines, [device] lines
  printf '[run]\nname = "bad"\noutput_dir = "%s/runs"\n[colocate]\n%s\n[device]\n%s\n' "$dir" "$2" "${3:-}" >"$1"
}
bad "$dir/none.toml" 'decks = []'
expect_status no_decks 2 "none.toml:5: colocate.decks: lists no decks" "$dir/none.toml"
bad "$dir/missing.toml" 'decks = ["lr_0.01.toml", "nowhere.toml"]'
expect_status missing 2 "missing.toml:5: colocate.decks: 'nowhere.toml'" "$dir/missing.toml"
printf '[train]\nglobal_batch = "big"\n' >>"$dir/mlp_bad.toml"
bad "$dir/malformed.toml" 'decks = ["lr_0.01.toml", "mlp_bad.toml"]'
expect_status malformed 2 "mlp_bad.toml:2: train.global_batch" "$dir/malformed.toml"
# One device, one precision (train.precision): a job deck that asks for another is refused.
sed 's/^\[train\]$/[train]\nprecision = "bf16"/' "$dir/mlp.toml" >"$dir/mlp_bf16.toml"
bad "$dir/precision.toml" 'decks = ["lr_0.01.toml", "mlp_bf16.toml"]'
expect_status precision_differs 2 "mlp_bf16.toml:13: train.precision: job 'mlp'.* has \"bf16\"" \
  "$dir/precision.toml"
bad "$dir/same.toml" 'decks = ["lr_0.01.toml", "lr_0.01.toml"]'
expect_status same_run_dir 2 "colocate.decks: 'lr_0.01.toml' and 'lr_0.01.toml' both name run.name" "$dir/same.toml"
bad "$dir/split.toml" $'decks = ["mlp.toml"]\nsplit_bytes = 2000000' 'memory_limit = 1000000'
expect_status split_over_budget 2 "split.toml:6: colocate.split_bytes: 2000000 bytes is more than" "$dir/split.toml"
bad "$dir/tiny.toml" 'decks = ["lr_0.01.toml", "mlp.toml"]' 'memory_limit = 2000000'
expect_status budget_under_weights 3 "^\[lenet_lr0.01\] wavetrain: rank 0: cannot allocate the parameter values .* out of device memory: requested 3430952 bytes" "$dir/tiny.toml"
# A node no pairing of node groups can run (issue 34): lenet's conv1 output at batch 4096 (470 MB)
# is more than a 100 MB budget leaves beside both jobs' weights: exit 3 before the first step,
# naming the node, its bytes and the budget.
job_deck "$dir/huge.toml" lenet_huge lenet.toml 0.01
sed -i 's/^global_batch = 32$/global_batch = 4096/' "$dir/huge.toml"
bad "$dir/node.toml" 'decks = ["huge.toml", "mlp.toml"]' 'memory_limit = 100000000'
expect_status node_over_budget 3 "co-location: node 0 'conv1' of job 'lenet_huge' .* needs [0-9]* bytes for its output at 4096 samples per rank, more than the [0-9]* bytes the budget leaves (device.memory_limit = 100000000 less" "$dir/node.toml"
! ls "$dir"/runs/bad/*/checkpoints/step_* 2>/dev/null || fail "a step ran before the node was refused"

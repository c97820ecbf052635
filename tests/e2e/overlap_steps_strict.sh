#!/usr/bin/env bash
# device.overlap_steps on the strict device (app/training_loop.cpp, exec/executor_step.cpp): with
# whole-step graphs, the host issues step k + 1 while the device still runs step k, and reads step
# k's results after that launch. The step's pinned inputs alternate between two sets, each with
# its own graph, so the host never rewrites what a running graph still copies in; the results
# come back by a copy the graph makes as its last work, read after an event.
#
# Proven here: overlap on, overlap off and graphs off train bitwise the same model (the final
# checkpoint's weights and optimizer state, and every logged loss) for lenet, mlp with AdamW (the
# per-step corrections through pinned memory), an mlp with dropout (the generator state through
# pinned memory), tick-tock's two streams and resnet; steps really overlapped, with one
# synchronisation a step; a run resumed from a checkpoint trains on the same; and the two bugs
# the design guards against are caught by the strict device with their messages: every step's
# inputs through one pinned set (the host rewrites a batch while the last graph may still copy it
# in), and the results read without waiting for the event after their copy.
source "$(dirname "$0")/lib/common.bash"
data=$(fashion_mnist_h5)
python=${WT_PYTHON:-/usr/bin/python3}
run() {  # name model graphs overlap [extra arguments]; steps=N: N steps, not 16
  local name="$1" model="$2" graphs="$3" overlap="$4"
  shift 4
  mpiexec -n 1 "$WAVETRAIN" "$WT_SOURCE_DIR/inputs/fashion_$model.toml" \
    --set "data.path=\"$data\"" --set train.log_every_steps=8 --set train.eval_every_epoch=false \
    --set 'device.kind="strict"' --set "device.cuda_graphs=$graphs" \
    --set "device.overlap_steps=$overlap" --set 'lr_schedule.kind="cosine"' \
    --set lr_schedule.warmup_steps=0 --steps "${steps:-16}" --run-dir "$dir/$name" "$@" \
    >"$dir/$name.out" 2>&1
}
losses() { awk -F, '$1=="train" { print $2, $4 }' "$dir/$1/metrics.csv"; }
summary() { grep -o "\"$2\": [0-9]*" "$dir/$1/summary.json" | awk '{print $2}'; }
same_weights() {  # run-a run-b step
  local step
  step=$(printf 'step_%08d.h5' "$3")
  "$python" "$WT_SOURCE_DIR/tests/e2e/lib/same_weights.py" "$dir/$1/checkpoints/$step" \
    "$dir/$2/checkpoints/$step"
}

sed '0,/^type = "relu"$/s//type = "relu"\n\n[[layer]]\nname = "drop1"\ntype = "dropout"\np = 0.3/' \
  "$WT_SOURCE_DIR/models/mlp.toml" >"$dir/mlp_dropout.toml"
grep -q 'type = "dropout"' "$dir/mlp_dropout.toml" || fail "no dropout layer in the test model"
# model optimizer schedule batch steps [extra]: steps 0 (eager), 1 and 2 (a capture per pinned
# set), then replays, most of them left running while the next is issued.
for config in "lenet sgd gang 64 16" "mlp adamw gang 64 16" "mlp sgd gang 64 16 dropout" \
  "lenet sgd ticktock 64 16" "resnet sgd gang 16 10"; do
  read -r model optimizer kind batch count extra <<<"$config"
  name="$model-$optimizer-$kind${extra:+-$extra}"
  args=(--set "optimizer.kind=\"$optimizer\"" --set "schedule.kind=\"$kind\""
    --set "train.global_batch=$batch")
  [[ -n $extra ]] && args+=(--set "model.file=\"$dir/mlp_dropout.toml\"")
  for mode in "off false false" "eager-graphs true false" "overlap true true"; do
    read -r what graphs overlap <<<"$mode"
    steps=$count run "$name-$what" "$model" "$graphs" "$overlap" "${args[@]}" ||
      { cat "$dir/$name-$what.out"; fail "$config: $what failed"; }
  done
  grep -q "device.overlap_steps: the host issues each replayed step while the last one runs" \
    "$dir/$name-overlap.out" || { cat "$dir/$name-overlap.out"; fail "$config: no overlap line"; }
  replays=$((count - 3))
  overlapped=$(summary "$name-overlap" overlapped_steps)
  [[ $(summary "$name-overlap" graph_captures) == 2 && $(summary "$name-overlap" graph_replays) == "$replays" ]] ||
    fail "$config: expected 2 captures (one per pinned set) and $replays replays: $(cat "$dir/$name-overlap/summary.json")"
  # Not the logging steps nor the last; nor the steps where the stop agreement syncs (RunControl:
  # after 1, 2, 4 steps and so on while steps are fast, every step once they take over a quarter
  # second: how many is the clock's). The strict device's gang steps of lenet and mlp are fast
  # enough on a loaded CI machine to overlap some; tick-tock's and resnet's may not be.
  min=0
  [[ $kind == gang && $model != resnet ]] && min=1
  [[ $overlapped -ge $min && $overlapped -le $((replays - 2)) ]] ||
    fail "$config: expected $min to $((replays - 2)) of $replays replays overlapped, summary says $overlapped"
  [[ $(summary "$name-overlap" device_synchronizations_per_step) == 1 ]] ||
    fail "$config: not one synchronisation a step with overlap"
  [[ $(summary "$name-eager-graphs" overlapped_steps) == 0 ]] || fail "$config: overlapped with overlap off"
  for other in off eager-graphs; do
    [[ "$(losses "$name-overlap")" == "$(losses "$name-$other")" ]] ||
      { diff <(losses "$name-overlap") <(losses "$name-$other"); fail "$config: overlap changed the losses against $other"; }
    same_weights "$name-overlap" "$name-$other" "$count" || fail "$config: overlap changed the weights against $other"
  done
  echo "ok: $config: overlap on, off and graphs off train the same weights; $overlapped of $replays replays overlapped, 1 synchronisation a step"
done

# Resumed from step 8's checkpoint with overlap on (a constant learning rate, which does not
# depend on the run's length): the same model as a straight run.
constant=(--set 'lr_schedule.kind="constant"' --set checkpoint.every_steps=8)
run resume-straight lenet true true "${constant[@]}" ||
  { cat "$dir/resume-straight.out"; fail "resume: the straight run failed"; }
steps=8 run resume lenet true true "${constant[@]}" ||
  { cat "$dir/resume.out"; fail "resume: the first part failed"; }
run resume lenet true true "${constant[@]}" --restart ||
  { cat "$dir/resume.out"; fail "resume: the second part failed"; }
grep -q "resumed from" "$dir/resume/log.txt" || fail "resume: no resume line in log.txt"
same_weights resume resume-straight 16 || fail "resumed with overlap: other weights than the straight run"
echo "ok: a run resumed with overlap trains the straight run's weights"

# A trace window opening after overlapped steps (its steps run eagerly, timed on the device): the
# step before it is finished first, and the run trains the same weights.
lenet=(--set 'optimizer.kind="sgd"' --set 'schedule.kind="gang"' --set train.global_batch=64)
run trace lenet true true "${lenet[@]}" --set trace.enabled=true --set trace.start_step=9 \
  --set trace.end_step=11 || { cat "$dir/trace.out"; fail "a trace window after overlapped steps failed"; }
[[ -f $dir/trace/trace.h5 ]] || fail "no trace.h5"
[[ $(summary trace overlapped_steps) -ge 1 ]] || fail "the trace run overlapped no step"
same_weights trace lenet-sgd-gang-off 16 || fail "a trace window changed the weights"
echo "ok: a trace window opening after overlapped steps: the same weights, trace written"

# A non-finite gradient in a step left running (stop mode, the default): the run stops at that
# step with the message it has without overlap (the guard's flags are kept per step parity; had
# the next step's overwritten them, the update would be skipped silently and only the next
# metrics row would see the loss). Row 330 is in step 6 (batches of 64, unshuffled), no log step.
"$WT_BINARY_DIR/synthetic_dataset" --output "$dir/nan.h5" --train 1280 --test 256 \
  --nan-rows 330 >/dev/null
for overlap in false true; do
  rc=0
  run "nan-$overlap" mlp true "$overlap" --set "data.path=\"$dir/nan.h5\"" --set data.shuffle=false \
    --set train.global_batch=64 || rc=$?
  [[ $rc -eq 4 ]] || { cat "$dir/nan-$overlap.out"; fail "NaN in an overlapped step: exit $rc, not 4"; }
done
# Step 6 is left running unless the stop agreement syncs after it, which it does only when steps
# take over 60 ms (RunControl: its sync interval is 0.25 s of steps).
grep -q "the host issues each replayed step while the last one runs" "$dir/nan-true.out" ||
  fail "NaN run: overlap was not on"
message() { grep -o 'non-finite loss/gradient at step [0-9]* ([^)]*)' "$dir/$1.out" | head -1; }
[[ -n "$(message nan-true)" && "$(message nan-true)" == "$(message nan-false)" ]] ||
  fail "NaN in an overlapped step: '$(message nan-true)' against '$(message nan-false)' without overlap"
echo "ok: a NaN gradient in a step left running stops the run there: $(message nan-true)"

# Jobs that must read each step back before the next say why, and train as before.
run skip mlp true true --set failure.on_nonfinite=skip ||
  { cat "$dir/skip.out"; fail "skip mode with graphs failed"; }
grep -q 'each step is read back before the next: failure.on_nonfinite = "skip"' "$dir/skip.out" ||
  { cat "$dir/skip.out"; fail "skip mode: no reason logged"; }
[[ $(summary skip overlapped_steps) == 0 && $(summary skip graph_captures) == 1 ]] ||
  fail "skip mode: overlapped, or more than one graph"
echo "ok: skip mode reads each step back first, one graph, saying why"

# The planted bugs: caught on the strict device, with their messages, every time.
expect_caught() {  # bug message
  local rc=0
  WAVETRAIN_TEST_PLANT_BUG=$1 run "$1" lenet true true || rc=$?
  [[ $rc -eq 1 ]] || { cat "$dir/$1.out"; fail "$1: exit $rc, not 1"; }
  grep -qF "$2" "$dir/$1.out" || { cat "$dir/$1.out"; fail "$1: not caught with: $2"; }
  echo "ok: $1 caught: $(grep -m1 -o 'error: .\{0,150\}' "$dir/$1.out")"
}
expect_caught overlap_one_input_set "the host rewrote the pinned source of a batch of raw uint8 inputs after issuing the copy and before it ran"
expect_caught overlap_read_unwaited "unordered access to the step's results in pinned host memory: reading the step's results"

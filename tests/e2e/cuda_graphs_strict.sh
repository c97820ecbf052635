#!/usr/bin/env bash
# device.cuda_graphs on the strict device (exec/executor_graphs.cpp, device/strict_graph.hpp): the
# second step is captured, later steps replay the captured closures while the host issues as
# usual. Graphs on and off train bitwise the same model (lenet and mlp, constant and cosine
# learning rates; resnet at a constant one; mlp with AdamW, whose bias corrections change every
# step; tick-tock's two streams, with and without its wave offset); with the optimizer's
# per-step values passed by value, a graph replays the captured learning rate and trains another
# model (the replays really run the captured work, and the equivalence catches a stale value);
# the same for dropout's generator state (an mlp with dropout); a batch copied from a moving
# buffer, labels in a new buffer each step, a synchronisation inside a graphed step and a kernel
# call that takes its own workspace are refused with their messages; a
# capture that leaves tick-tock's second stream out is refused; tick-tock resumes with graphs; a
# skipped first update keeps the equivalence; jobs that cannot have graphs say why and run eagerly;
# the graph's memory handing one stream's frees to another without an ordering event is refused.
source "$(dirname "$0")/lib/common.bash"
data=$(fashion_mnist_h5)
run() {  # name model graphs lr_schedule [extra arguments]; steps=N run ...: N steps, not 16
  local name="$1" model="$2" graphs="$3" schedule="$4"
  shift 4
  mpiexec -n 1 "$WAVETRAIN" "$WT_SOURCE_DIR/inputs/fashion_$model.toml" \
    --set "data.path=\"$data\"" --set train.log_every_steps=2 --set train.eval_every_epoch=false \
    --set 'device.kind="strict"' --set "device.cuda_graphs=$graphs" \
    --set "lr_schedule.kind=\"$schedule\"" --set lr_schedule.warmup_steps=0 --steps "${steps:-16}" \
    --run-dir "$dir/$name" "$@" >"$dir/$name.out" 2>&1
}
losses() { awk -F, '$1=="train" { print $2, $4 }' "$dir/$1/metrics.csv"; }
mb() { grep -o '"peak_device_mb": [0-9.]*' "$dir/$1/summary.json" | awk '{print $2}'; }

# Tick-tock: two waves on two streams of one rank, in one graph (the tock's stream, used since the
# first step, is forked into the capture when it begins), each wave's kept gradient read by the
# other across steps;
# with its offset (node groups paired across the streams) and in lockstep.
for config in "lenet constant sgd" "lenet cosine sgd" "mlp cosine sgd" "mlp cosine adamw" \
  "lenet cosine sgd ticktock" "mlp cosine adamw ticktock" "lenet cosine sgd ticktock lockstep"; do
  read -r model schedule optimizer kind lockstep <<<"$config"
  name="$model-$schedule-$optimizer${kind:+-$kind}${lockstep:+-$lockstep}"
  extra=(--set "optimizer.kind=\"$optimizer\"" --set "schedule.kind=\"${kind:-gang}\"")
  [[ -n $lockstep ]] && extra+=(--set schedule.wave_offset=false)
  run "$name-off" "$model" false "$schedule" "${extra[@]}" ||
    { cat "$dir/$name-off.out"; fail "$config: graphs off failed"; }
  run "$name-on" "$model" true "$schedule" "${extra[@]}" ||
    { cat "$dir/$name-on.out"; fail "$config: graphs on failed"; }
  grep -q "the second step is captured as a graph" "$dir/$name-on.out" ||
    { cat "$dir/$name-on.out"; fail "$config: no line saying graphs are on"; }
  counts=$(grep -oE '"graph_(captures|replays)": [0-9]+' "$dir/$name-on/summary.json" | tr '\n' ' ')
  # A capture per pinned set (device.overlap_steps: tests/e2e/overlap_steps_strict.sh).
  [[ $counts == '"graph_captures": 2 "graph_replays": 13 ' ]] ||
    fail "$config: expected 2 captures and 13 replays of 16 steps, summary.json says: $counts"
  on=$(losses "$name-on")
  off=$(losses "$name-off")
  [[ $(wc -l <<<"$on") -eq 8 ]] || fail "$config: expected 8 loss rows, got: $on"
  [[ "$on" == "$off" ]] || { diff <(echo "$on") <(echo "$off"); fail "$config: graphs changed the losses"; }
  # The eager steps' cache is returned before the graph's pool fills: reserved bytes stay near the
  # eager run's (before, the two pools together doubled them: lenet 68 MB against 38 at batch 64).
  # Tick-tock too: a block one stream freed serves the other once a captured event orders the
  # free first (before that rule, lenet held 94 MB against 62).
  factor=1.3
  [[ -n $(mb "$name-on") && -n $(mb "$name-off") ]] || fail "$config: no peak_device_mb in summary.json"
  awk -v on="$(mb "$name-on")" -v off="$(mb "$name-off")" -v f=$factor \
    'BEGIN { exit !(on <= f * off + 2) }' ||
    fail "$config: peak reserved $(mb "$name-on") MB with graphs against $(mb "$name-off") MB without"
  echo "ok: $config: graphs on and off give the same 8 losses; peak reserved $(mb "$name-on") MB against $(mb "$name-off")"
done
# transformer_small (embedding, attention, layer norm, AdamW) where the KJV dataset was made.
kjv="$WT_SOURCE_DIR/data/kjv.h5"
if [[ -f $kjv ]]; then
  for graphs in true false; do
    mpiexec -n 1 "$WAVETRAIN" "$WT_SOURCE_DIR/inputs/text_transformer.toml" --set "data.path=\"$kjv\"" \
      --set train.global_batch=32 --set train.log_every_steps=1 --set train.eval_every_epoch=false \
      --set 'device.kind="strict"' --set "device.cuda_graphs=$graphs" --steps 8 \
      --run-dir "$dir/transformer-$graphs" >"$dir/transformer-$graphs.out" 2>&1 ||
      { cat "$dir/transformer-$graphs.out"; fail "transformer_small, graphs $graphs"; }
  done
  grep -q '"graph_replays": 5' "$dir/transformer-true/summary.json" || fail "transformer: not 5 replays"
  [[ $(losses transformer-true | wc -l) -eq 8 ]] || fail "transformer: expected 8 loss rows"
  [[ "$(losses transformer-true)" == "$(losses transformer-false)" ]] ||
    { diff <(losses transformer-true) <(losses transformer-false); fail "transformer: graphs changed the losses"; }
  echo "ok: transformer_small: graphs on and off give the same 8 losses"
else
  echo "skipped: transformer_small (no $kjv: tools/setup.sh makes it)"
fi
# resnet: batch norm, and convolutions the host computes by im2col in a workspace (lenet's go to
# oneDNN, which needs none). The layer reserves the workspace before the kernel call, so a replay,
# whose kernel calls run none of their host code on a GPU, allocates what its capture did.
rn=(--set train.global_batch=16 --set train.log_every_steps=1)
for graphs in true false; do
  steps=8 run "resnet-$graphs" resnet "$graphs" constant "${rn[@]}" ||
    { cat "$dir/resnet-$graphs.out"; fail "resnet, graphs $graphs"; }
done
grep -q '"graph_replays": 5' "$dir/resnet-true/summary.json" || fail "resnet: not 5 replays"
[[ $(losses resnet-true | wc -l) -eq 8 && "$(losses resnet-true)" == "$(losses resnet-false)" ]] ||
  { diff <(losses resnet-true) <(losses resnet-false); fail "resnet: graphs changed the losses"; }
echo "ok: resnet: graphs on and off give the same 8 losses"
[[ "$(losses lenet-cosine-sgd-ticktock-off)" != "$(losses lenet-cosine-sgd-off)" ]] ||
  fail "tick-tock trained what gang did: the schedule was not applied"

# The learning rate by value: each replay keeps the captured one, and trains another model.
WAVETRAIN_TEST_PLANT_BUG=stale_graph run stale mlp true cosine || { cat "$dir/stale.out"; fail "stale_graph run failed"; }
stale=$(losses stale)
[[ "$stale" != "$(losses mlp-cosine-sgd-off)" ]] || fail "a stale graph trained the same model: replays did not run the captured work"
echo "ok: a graph with the learning rate by value trains another model (the equivalence catches it)"

expect_refusal() {  # bug pattern [model [arguments...]] (model: mlp by default)
  local rc=0 bug="$1" pattern="$2" model="${3:-mlp}"
  shift $(($# < 3 ? $# : 3))
  WAVETRAIN_TEST_PLANT_BUG="$bug" run "$bug" "$model" true constant "$@" || rc=$?
  [[ $rc -eq 1 ]] || { cat "$dir/$bug.out"; fail "$bug: exit $rc, expected 1"; }
  grep -q "$pattern" "$dir/$bug.out" || { cat "$dir/$bug.out"; fail "$bug: no message matching '$pattern'"; }
  echo "ok: $bug refused: $(grep -o 'strict device: [^;.]*' "$dir/$bug.out" | head -1)"
}
expect_refusal graph_inputs_moved "an event query (the host asking whether device work has finished) while a step is captured"
expect_refusal graph_labels_moved "the tensor moved between steps"
expect_refusal graph_sync_in_step "a device synchronisation while a step is captured as a graph"

# A convolution taking its own workspace inside the kernel call (op_scratch_at_issue: CudaOps'
# fallback, the layer reserving none): the capture has it, a replay (no host code of the call on a
# GPU) does not, and the replayed kernel is refused before it runs on the wrong memory.
expect_refusal op_scratch_at_issue \
  "touches 3 memory ranges where the captured one touched 4: .*memory a kernel call sets up itself" \
  resnet "${rn[@]}"

# The graph's memory handing tick-tock's tick's frees to the tock without an ordering event
# (graph_reuse_unordered): the tock's first write races the poisoning of the freed block.
expect_refusal graph_reuse_unordered \
  "on stream 1 writes it while the poisoning of freed memory of .* on stream 0 .* may still be writing it; nothing orders the two" \
  lenet --set 'schedule.kind="ticktock"'

# A graph's capture must take in every stream of the step: with the capture forking none from the
# capturing stream (the fork loop of cuda_device.cpp left out), tick-tock's second stream is
# outside it and its first work is refused; gang, on one stream, is untouched.
expect_refusal capture_forks_none \
  "was launched while a step is captured as a graph, but stream 1 is not in the capture" \
  lenet --set 'schedule.kind="ticktock"'
WAVETRAIN_TEST_PLANT_BUG=capture_forks_none run forks-none-gang lenet true constant ||
  { cat "$dir/forks-none-gang.out"; fail "capture_forks_none refused a one-stream program"; }
echo "ok: capture_forks_none leaves a one-stream program alone"

# Tick-tock resumed with graphs: the kept gradients come from the checkpoint, the first resumed
# step runs eagerly, the next is captured; the losses after the resume are the uninterrupted ones.
tt=(--set 'schedule.kind="ticktock"' --set checkpoint.every_steps=8)
run tt-whole lenet true constant "${tt[@]}" || { cat "$dir/tt-whole.out"; fail "tick-tock, 16 steps"; }
steps=8 run tt-resumed lenet true constant "${tt[@]}" || { cat "$dir/tt-resumed.out"; fail "tick-tock, 8 steps"; }
run tt-resumed lenet true constant "${tt[@]}" --restart ||
  { cat "$dir/tt-resumed.out"; fail "tick-tock resumed at step 8"; }
after_resume() { awk -F, '$1=="train" && $2 > 8 { print $2, $4 }' "$dir/$1/metrics.csv"; }
[[ $(after_resume tt-whole | wc -l) -eq 4 && "$(after_resume tt-resumed)" == "$(after_resume tt-whole)" ]] ||
  { diff <(after_resume tt-resumed) <(after_resume tt-whole); fail "tick-tock resumed with graphs trained another model"; }
echo "ok: tick-tock resumed at step 8 with graphs gives the uninterrupted losses of steps 10-16"

# Non-finite gradients skipped (failure.on_nonfinite = "skip"): NaN rows in the batches of steps 1,
# 3 and 5 of a 10-step epoch. Step 1's update is skipped, so the captured step 2 is the first
# counted one, and SGD's first-step rule must come from device memory each step, not from the
# kernel chosen at the capture: graphs on and off train the same model. With the per-step values
# by value (stale_graph; the learning rate is constant here) every replay restarts the momentum,
# and the equivalence catches it.
"$WT_BINARY_DIR/synthetic_dataset" --output "$dir/nan.h5" --train 640 --test 256 \
  --nan-rows 5,130,300 >/dev/null
nan=(--set "data.path=\"$dir/nan.h5\"" --set data.shuffle=false --set failure.on_nonfinite=skip
     --set train.log_every_steps=1)
steps=10 run nan-off mlp false constant "${nan[@]}" || { cat "$dir/nan-off.out"; fail "non-finite skips, graphs off"; }
steps=10 run nan-on mlp true constant "${nan[@]}" || { cat "$dir/nan-on.out"; fail "non-finite skips, graphs on"; }
[[ "$(losses nan-on)" == "$(losses nan-off)" ]] ||
  { diff <(losses nan-on) <(losses nan-off); fail "skipped first update: graphs changed the losses"; }
grep -q '"skipped_steps": 3' "$dir/nan-on/summary.json" || fail "expected 3 skipped steps"
grep -q '"graph_captures": 1' "$dir/nan-on/summary.json" || fail "expected one capture"
grep -q '"graph_replays": 8' "$dir/nan-on/summary.json" || fail "expected 8 replays of 10 steps"
WAVETRAIN_TEST_PLANT_BUG=stale_graph steps=10 run nan-planted mlp true constant "${nan[@]}" ||
  { cat "$dir/nan-planted.out"; fail "stale_graph run with a skipped first update failed"; }
[[ "$(losses nan-planted)" != "$(losses nan-off)" ]] ||
  fail "a captured first-step rule trained the same model: the equivalence would not catch it"
echo "ok: a skipped first update: graphs on and off the same; the first-step rule by value caught"

# Dropout (an mlp with a dropout layer): the masks come from the batch generator's state, which a
# graphed step's kernel reads from a fixed pinned word; graphs on and off train the same model.
# Passed by value, the replays draw the captured step's masks again and train another model.
sed '0,/^type = "relu"$/s//type = "relu"\n\n[[layer]]\nname = "drop1"\ntype = "dropout"\np = 0.3/' \
  "$WT_SOURCE_DIR/models/mlp.toml" >"$dir/mlp_dropout.toml"
grep -q 'type = "dropout"' "$dir/mlp_dropout.toml" || fail "no dropout layer in the test model"
drop=(--set "model.file=\"$dir/mlp_dropout.toml\"")
run dropout-off mlp false cosine "${drop[@]}" || { cat "$dir/dropout-off.out"; fail "dropout, graphs off"; }
run dropout-on mlp true cosine "${drop[@]}" || { cat "$dir/dropout-on.out"; fail "dropout, graphs on"; }
grep -q "the second step is captured as a graph" "$dir/dropout-on.out" ||
  { cat "$dir/dropout-on.out"; fail "dropout: graphs not on"; }
[[ "$(losses dropout-on)" == "$(losses dropout-off)" ]] ||
  { diff <(losses dropout-on) <(losses dropout-off); fail "dropout: graphs changed the losses"; }
[[ "$(losses dropout-off)" != "$(losses mlp-cosine-sgd-off)" ]] || fail "the dropout layer changed nothing"
WAVETRAIN_TEST_PLANT_BUG=graph_dropout_by_value run dropout-stale mlp true cosine "${drop[@]}" ||
  { cat "$dir/dropout-stale.out"; fail "graph_dropout_by_value run failed"; }
[[ "$(losses dropout-stale)" != "$(losses dropout-off)" ]] ||
  fail "dropout's state by value trained the same model: the replays did not repeat the captured masks"
echo "ok: dropout trains the same model with graphs; its state by value is caught by the equivalence"

# Jobs that cannot have graphs say why and train as before.
run hostdev mlp true constant --set 'device.kind="host"' || { cat "$dir/hostdev.out"; fail "host run failed"; }
grep -q "steps run eagerly: the host device has no graphs" "$dir/hostdev.out" || { cat "$dir/hostdev.out"; fail "host: no reason logged"; }
run shared mlp true constant --set "background.deck=\"$WT_SOURCE_DIR/inputs/lenet_background.toml\"" ||
  { cat "$dir/shared.out"; fail "a run with a background failed"; }
grep -q "steps run eagerly: the device is shared with another job" "$dir/shared.out" ||
  { cat "$dir/shared.out"; fail "background: no reason logged"; }
echo "ok: the host device and a job with a background run eagerly, saying why"

#!/usr/bin/env bash
# device.cuda_graphs on the strict device (exec/executor_graphs.cpp, device/strict_graph.hpp): the
# second step is captured, later steps replay the captured closures while the host issues as
# usual. Graphs on and off train bitwise the same model (lenet, mlp; a constant learning rate, so
# every later step replays; a cosine one, so every step is captured again); a graph replayed
# after the learning rate changed trains another model (the replays really run the captured
# work, and the equivalence catches a stale by-value argument); a batch copied from a moving
# buffer, labels in a new buffer each step and a synchronisation inside a graphed step are refused with their messages; jobs that
# cannot have graphs say why and run eagerly.
source "$(dirname "$0")/lib/common.bash"
data=$(fashion_mnist_h5)
run() {  # name model graphs lr_schedule [extra --set ...]
  local name="$1" model="$2" graphs="$3" schedule="$4"
  shift 4
  mpiexec -n 1 "$WAVETRAIN" "$WT_SOURCE_DIR/inputs/fashion_$model.toml" \
    --set "data.path=\"$data\"" --set train.log_every_steps=2 --set train.eval_every_epoch=false \
    --set 'device.kind="strict"' --set "device.cuda_graphs=$graphs" \
    --set "lr_schedule.kind=\"$schedule\"" --set lr_schedule.warmup_steps=0 --steps 16 \
    --run-dir "$dir/$name" "$@" >"$dir/$name.out" 2>&1
}
losses() { awk -F, '$1=="train" { print $2, $4 }' "$dir/$1/metrics.csv"; }

for config in "lenet constant" "mlp constant" "mlp cosine"; do
  read -r model schedule <<<"$config"
  run "$model-$schedule-off" "$model" false "$schedule" || { cat "$dir/$model-$schedule-off.out"; fail "$config: graphs off failed"; }
  run "$model-$schedule-on" "$model" true "$schedule" || { cat "$dir/$model-$schedule-on.out"; fail "$config: graphs on failed"; }
  grep -q "the second step is captured as a graph" "$dir/$model-$schedule-on.out" ||
    { cat "$dir/$model-$schedule-on.out"; fail "$config: no line saying graphs are on"; }
  on=$(losses "$model-$schedule-on")
  off=$(losses "$model-$schedule-off")
  [[ $(wc -l <<<"$on") -eq 8 ]] || fail "$config: expected 8 loss rows, got: $on"
  [[ "$on" == "$off" ]] || { diff <(echo "$on") <(echo "$off"); fail "$config: graphs changed the losses"; }
  echo "ok: $config: graphs on and off give the same 8 losses"
done

# A graph replayed after the learning rate changed keeps the captured one: another model.
WAVETRAIN_TEST_PLANT_BUG=stale_graph run stale mlp true cosine || { cat "$dir/stale.out"; fail "stale_graph run failed"; }
stale=$(losses stale)
[[ "$stale" != "$(losses mlp-cosine-off)" ]] || fail "a stale graph trained the same model: replays did not run the captured work"
echo "ok: a graph replayed with a stale learning rate trains another model (the equivalence catches it)"

expect_refusal() {  # bug pattern
  local rc=0
  WAVETRAIN_TEST_PLANT_BUG="$1" run "$1" mlp true constant || rc=$?
  [[ $rc -eq 1 ]] || { cat "$dir/$1.out"; fail "$1: exit $rc, expected 1"; }
  grep -q "$2" "$dir/$1.out" || { cat "$dir/$1.out"; fail "$1: no message matching '$2'"; }
  echo "ok: $1 refused: $(grep -o "$2[^:]*" "$dir/$1.out" | head -1)"
}
expect_refusal graph_inputs_moved "an event query (the host asking whether device work has finished) while a step is captured"
expect_refusal graph_labels_moved "the tensor moved between steps"
expect_refusal graph_sync_in_step "a device synchronisation while a step is captured as a graph"

# Jobs that cannot have graphs say why and train as before.
run adamw mlp true constant --set 'optimizer.kind="adamw"' || { cat "$dir/adamw.out"; fail "adamw run failed"; }
grep -q "steps run eagerly: AdamW's bias corrections" "$dir/adamw.out" || { cat "$dir/adamw.out"; fail "adamw: no reason logged"; }
run hostdev mlp true constant --set 'device.kind="host"' || { cat "$dir/hostdev.out"; fail "host run failed"; }
grep -q "steps run eagerly: the host device has no graphs" "$dir/hostdev.out" || { cat "$dir/hostdev.out"; fail "host: no reason logged"; }
echo "ok: AdamW and the host device run eagerly, saying why"

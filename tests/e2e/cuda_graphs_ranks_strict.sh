#!/usr/bin/env bash
# device.cuda_graphs on 2 ranks of the strict device: a whole-step graph holds the step's
# transfers (NCCL's calls on a GPU; here the strict device's communication queue, whose transfers
# are device work ordered by events, as NCCL's are on its stream). Every multi-rank schedule
# trains bitwise the same model with graphs on and off, one capture and 14 replays of 16 steps,
# one synchronisation a step: gang, gang with its master, pipeline, waves (borrowed stages given
# back after their reduce) and tick-tock. Two bugs a CUDA port of the glue could have are refused
# with their messages: a transfer whose communication stream never waits for the issuing stream's
# event (so outside the capture: a GPU would run it once, at once) and the host polling a graphed
# step's transfers (an event query inside the capture). ScaleDNN's codec encodes and decodes on the
# host around a stream synchronisation inside the transfer: its jobs run eagerly and say why.
source "$(dirname "$0")/lib/common.bash"
data=$(fashion_mnist_h5)
run() {  # name model graphs [extra arguments]
  local name="$1" model="$2" graphs="$3"
  shift 3
  mpiexec -n 2 "$WAVETRAIN" "$WT_SOURCE_DIR/inputs/fashion_$model.toml" \
    --set "data.path=\"$data\"" --set train.log_every_steps=2 --set train.eval_every_epoch=false \
    --set 'device.kind="strict"' --set "device.cuda_graphs=$graphs" --steps 16 \
    --run-dir "$dir/$name" "$@" >"$dir/$name.out" 2>&1
}
losses() { awk -F, '$1=="train" { print $2, $4 }' "$dir/$1/metrics.csv"; }

for config in "mlp gang" "lenet gang master" "mlp pipeline" "lenet waves" "mlp ticktock"; do
  read -r model kind sync <<<"$config"
  name=$(tr ' ' - <<<"$config")
  extra=(--set "schedule.kind=\"$kind\"")
  [[ $sync == master ]] && extra+=(--set 'schedule.gang_sync="master"')
  [[ $kind == pipeline ]] && extra+=(--set schedule.microbatches=4)
  run "$name-off" "$model" false "${extra[@]}" ||
    { cat "$dir/$name-off.out"; fail "$config: graphs off failed"; }
  run "$name-on" "$model" true "${extra[@]}" ||
    { cat "$dir/$name-on.out"; fail "$config: graphs on failed"; }
  grep -q "the second step is captured as a graph" "$dir/$name-on.out" ||
    { cat "$dir/$name-on.out"; fail "$config: no line saying graphs are on"; }
  counts=$(grep -oE '"(graph_captures|graph_replays|device_synchronizations_per_step)": [0-9]+' \
    "$dir/$name-on/summary.json" | tr '\n' ' ')
  [[ $counts == '"graph_captures": 1 "graph_replays": 14 "device_synchronizations_per_step": 1 ' ]] ||
    fail "$config: expected 1 capture, 14 replays and 1 synchronisation a step, summary.json says: $counts"
  on=$(losses "$name-on")
  off=$(losses "$name-off")
  [[ $(wc -l <<<"$on") -eq 8 ]] || fail "$config: expected 8 loss rows, got: $on"
  [[ "$on" == "$off" ]] || { diff <(echo "$on") <(echo "$off"); fail "$config: graphs changed the losses"; }
  echo "ok: $config on 2 ranks: graphs on and off give the same 8 losses"
done

codec=(--set 'schedule.kind="waves"' --set 'compress.weights="scalednn"')
run codec lenet true "${codec[@]}" || { cat "$dir/codec.out"; fail "waves with the codec failed"; }
grep -q "steps run eagerly: its weights travel encoded" "$dir/codec.out" ||
  { cat "$dir/codec.out"; fail "the codec: no line saying why steps run eagerly"; }
[[ "$(losses codec)" != "$(losses lenet-waves-off)" ]] || fail "the codec changed nothing"
echo "ok: waves with ScaleDNN's codec runs eagerly, saying why"

expect_refusal() {  # bug pattern [extra arguments]
  local rc=0 bug="$1" pattern="$2"
  shift 2
  WAVETRAIN_TEST_PLANT_BUG="$bug" run "$bug" mlp true "$@" || rc=$?
  [[ $rc -eq 1 ]] || { cat "$dir/$bug.out"; fail "$bug: exit $rc, expected 1"; }
  grep -q "$pattern" "$dir/$bug.out" || { cat "$dir/$bug.out"; fail "$bug: no message matching '$pattern'"; }
  echo "ok: $bug refused: $(grep -o "strict device: [^.]*" "$dir/$bug.out" | head -1)"
}
expect_refusal comm_not_joined "a transfer's start of .* was launched while a step is captured as a graph, but stream 63 is not in the capture"
# (pipeline: the host polls after each node, with transfers in flight from the first stage on)
expect_refusal polled_in_graph "an event query (the host asking whether a transfer has finished) while a step is captured" \
  --set 'schedule.kind="pipeline"' --set schedule.microbatches=4
# The same bugs are harmless where no step is graphed: the refusals above are the graph's rules.
WAVETRAIN_TEST_PLANT_BUG=comm_not_joined run not-joined-eager mlp false ||
  { cat "$dir/not-joined-eager.out"; fail "comm_not_joined refused an eager run"; }
echo "ok: the same glue trains eagerly"

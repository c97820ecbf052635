#!/usr/bin/env bash
# End to end: a diverging run (optimizer.lr = 1e300, so the first step's update overflows and the
# next gradients are Inf/NaN) ends at once on every schedule and device, including those where
# only a stage's owner sees its gradient (master sync with and without scatter, pipeline, waves
# with and without the codec, a burst segment on one rank, a pipeline beside a background job).
# Each run, on 2 ranks, must end within
# 10 s of its start with exit status 4 on *every* rank (each rank writes its own status through a
# wrapper) and print one "diverged" message naming the step and the stage. Before the divergence
# was agreed within the step, these hung for failure.stall_seconds and exited 5 blaming a rank.
source "$(dirname "$0")/lib/common.bash"
data=$(fashion_mnist_h5)
deck="$WT_SOURCE_DIR/inputs/fashion_mlp.toml"
mlp_fc_on_rank0='burst.ranks=[2,2,2,1,1,1,1]'  # flatten..relu on 2 ranks, the rest on rank 0

schedules=(
  "gang|--set schedule.kind=gang"
  "ticktock|--set schedule.kind=ticktock"
  "master|--set schedule.kind=gang --set schedule.gang_sync=master"
  "master_scatter|--set schedule.kind=gang --set schedule.gang_sync=master --set data.distribution=scatter"
  "pipeline|--set schedule.kind=pipeline --set schedule.microbatches=2"
  "waves|--set schedule.kind=waves"
  "waves_codec|--set schedule.kind=waves --set compress.weights=scalednn --set compress.min_bytes=0"
  "burst|--set schedule.kind=burst --set $mlp_fc_on_rank0"
  # DeepPool's multiplexing: the votes ride on the step-end arrival, not a collective of their own
  "pipeline_background|--set schedule.kind=pipeline --set schedule.microbatches=1 --set background.deck=\"$dir/background.toml\" --set background.warmup_steps=1"
)
# The background job: the same deck, its data and model paths made absolute.
sed -e "s|^path = .*|path = \"$data\"|" -e "s|^file = \"\\.\\./|file = \"$WT_SOURCE_DIR/|" \
  "$deck" >"$dir/background.toml"

# One rank's wavetrain, recording its own exit status. mpiexec reports only one, and kills the
# other ranks as soon as one exits non-zero, so the wrapper itself exits 0: a rank that hangs
# still shows (no status file, and timeout's 124).
cat >"$dir/rank.sh" <<'EOF'
#!/usr/bin/env bash
"$@"
echo "$?" >"$STATUS_DIR/rank$OMPI_COMM_WORLD_RANK"
EOF
chmod +x "$dir/rank.sh"

for device in host strict; do
  for entry in "${schedules[@]}"; do
    name=${entry%%|*}
    read -r -a extra <<<"${entry#*|}"
    run="$dir/$device-$name"
    mkdir -p "$run.status"
    start=$(date +%s.%N)
    set +e
    # The stall watchdog's limit is far above the bound: a hang cannot pass as its exit 5.
    STATUS_DIR="$run.status" timeout 120 mpiexec -n 2 -x STATUS_DIR "$dir/rank.sh" \
      "$WAVETRAIN" "$deck" --set "data.path=\"$data\"" --set optimizer.lr=1e300 \
      --set lr_schedule.kind=constant --set lr_schedule.warmup_steps=0 \
      --set "device.kind=\"$device\"" --set failure.stall_seconds=60 "${extra[@]}" \
      --steps 20 --run-dir "$run" >"$run.out" 2>&1
    rc=$?
    set -e
    seconds=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
    echo "$device $name: ranks exited $(cat "$run.status"/rank* 2>/dev/null | tr '\n' ' ')in ${seconds}s: $(grep -m1 diverged "$run.out" || true)"
    [[ $rc == 0 ]] || { cat "$run.out"; fail "$device $name: mpiexec exited $rc (124: timed out)"; }
    for r in 0 1; do
      [[ $(cat "$run.status/rank$r" 2>/dev/null) == 4 ]] ||
        { cat "$run.out"; fail "$device $name: rank $r exited $(cat "$run.status/rank$r" 2>/dev/null || echo '(none)'), expected 4"; }
    done
    awk -v s="$seconds" 'BEGIN { exit !(s < 10) }' ||
      fail "$device $name: took ${seconds}s to stop, expected under 10 s"
    [[ $(grep -c "wavetrain: diverged: non-finite loss/gradient at step [0-9]* (stage [0-9]*: " "$run.out") == 1 ]] ||
      { cat "$run.out"; fail "$device $name: expected one 'diverged ... at step N (stage S: ...' message"; }
    grep -q "stalled\|killed or crashed" "$run.out" &&
      { cat "$run.out"; fail "$device $name: a rank was blamed for the divergence"; }
  done
done
echo "every schedule on host and strict: exit 4 on every rank, one message naming step and stage"

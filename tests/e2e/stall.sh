#!/usr/bin/env bash
# End to end: a rank that is alive but late. Two ranks train with failure.stall_seconds = 3; once
# training is under way rank 1 is stopped (SIGSTOP). Rank 0's watchdog must report, within a
# bounded time, that it waits in a collective and that rank 1 is late (not responding), and the
# job must end with status 5. Nothing may be left running. Twice: on the host device, and on the
# strict device with whole-step graphs, where rank 0 waits in a graphed step's read-back (the strict
# device's transfers still go through the watched communicator, so it names the allreduce; on a GPU
# the NCCL calls are inside the graph, unseen by it, and the read-back is the watched region that
# the message would name, "graphed step's collectives").
source "$(dirname "$0")/lib/common.bash"
source "$(dirname "$0")/lib/processes.bash"
trap 'kill_matching "$dir/run"; rm -rf "$dir"' EXIT
data=$(fashion_mnist_h5)
for device in host graphed; do
  extra=()
  [[ $device == graphed ]] && extra=(--set 'device.kind="strict"' --set device.cuda_graphs=true)
  rm -rf "$dir/run"
  mpiexec -n 2 "$WAVETRAIN" "$WT_SOURCE_DIR/inputs/fashion_mlp.toml" --set "data.path=\"$data\"" \
    --set failure.stall_seconds=3 --set train.log_every_steps=20 --steps $ENDLESS_STEPS \
    --run-dir "$dir/run" "${extra[@]}" >"$dir/out.txt" 2>&1 &
  job=$!
  wait_lines "$dir/run/metrics.csv" 3 60  # header + two train rows: training is under way
  victim=$(rank_pid "$dir/run" 1)
  [[ -n $victim ]] || fail "$device: rank 1 not found"
  kill -STOP "$victim"
  start=$SECONDS
  wait_gone "$job" 60 || fail "$device: the job did not end within 60 s of stopping rank 1"
  rc=0
  wait "$job" || rc=$?
  cat "$dir/out.txt"
  echo "$device: job ended ${rc:+with status $rc }$((SECONDS - start)) s after rank 1 was stopped"
  [[ $rc == 5 ]] || fail "$device: exit status $rc, expected 5"
  grep -E "wavetrain: rank 0: stalled: waited [0-9.]+ s in (allreduce|graphed step's collectives).*; late: rank 1 \(pid $victim\): not responding" \
    "$dir/out.txt" || fail "$device: rank 0's watchdog did not name rank 1 as late"
  [[ $device != graphed ]] || grep -q "the second step is captured as a graph" "$dir/out.txt" ||
    fail "graphed: graphs were not on"
done

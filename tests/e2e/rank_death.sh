#!/usr/bin/env bash
# End to end: a rank that dies (kill -9) in the middle of training on 2 ranks.
# 1. Under a plain mpiexec the job must end non-zero within a bounded time, naming the dead rank;
#    the last complete checkpoint (checkpoint.every_steps = 10) stays usable: --restart on the
#    same run directory resumes from it and finishes.
# 2. A launcher that does not end the job when one process dies (Open MPI told so with
#    orte_abort_on_non_zero_status=0) must not leave the survivor hanging until walltime, even
#    when it is inside a collective checkpoint write: its watchdog (failure.stall_seconds = 3)
#    sees rank 1's process gone, names it and exits 5 on its own.
# Nothing may be left running.
source "$(dirname "$0")/lib/common.bash"
source "$(dirname "$0")/lib/processes.bash"
trap 'kill_matching "$dir/run"; rm -rf "$dir"' EXIT
data=$(fashion_mnist_h5)

start_job() {  # run_dir out_file [mpiexec options...]
  local run=$1 out=$2
  shift 2
  mpiexec "$@" -n 2 "$WAVETRAIN" "$WT_SOURCE_DIR/inputs/fashion_mlp.toml" \
    --set "data.path=\"$data\"" --set failure.stall_seconds=3 --set train.log_every_steps=20 \
    --set checkpoint.every_steps=10 --steps $ENDLESS_STEPS --run-dir "$run" >"$out" 2>&1 &
  job=$!
  wait_lines "$run/metrics.csv" 3 60
  victim=$(rank_pid "$run" 1)
  survivor=$(rank_pid "$run" 0)
  [[ -n $victim && -n $survivor ]] || fail "ranks of $run not found"
}

# 1. Plain mpiexec.
start_job "$dir/run1" "$dir/out1.txt"
kill -KILL "$victim"
start=$SECONDS
wait_gone "$job" 60 || fail "mpiexec still running 60 s after rank 1 was killed"
rc=0
wait "$job" || rc=$?
cat "$dir/out1.txt"
echo "case 1: mpiexec exited $rc, $((SECONDS - start)) s after the kill"
[[ $rc != 0 ]] || fail "mpiexec exited 0 after a rank was killed"
grep -q "rank 1" "$dir/out1.txt" || fail "the output does not name rank 1"
latest=$(cat "$dir/run1/checkpoints/latest")
ck=$((10#$(sed 's/step_\([0-9]*\)\.h5/\1/' <<<"$latest")))
[[ $ck -ge 10 ]] || fail "no checkpoint before the kill ($latest)"
mpiexec -n 2 "$WAVETRAIN" "$WT_SOURCE_DIR/inputs/fashion_mlp.toml" --set "data.path=\"$data\"" \
  --set train.log_every_steps=20 --set checkpoint.every_steps=10 --steps $((ck + 30)) \
  --run-dir "$dir/run1" --restart >"$dir/restart1.txt" 2>&1 || { cat "$dir/restart1.txt"; fail "--restart after the kill failed"; }
grep -q "resumed from .*$latest" "$dir/run1/log.txt" || fail "no resume from $latest in log.txt"
grep -q "wavetrain: done: $((ck + 30)) steps" "$dir/restart1.txt" || { cat "$dir/restart1.txt"; fail "the resumed run did not finish"; }
echo "case 1: resumed from $latest after the kill and finished step $((ck + 30))"

# 2. A launcher that leaves the survivor running.
start_job "$dir/run2" "$dir/out2.txt" --mca orte_abort_on_non_zero_status 0
kill -KILL "$victim"
start=$SECONDS
wait_gone "$survivor" 60 || fail "rank 0 still running 60 s after rank 1 was killed"
echo "case 2: rank 0 ended $((SECONDS - start)) s after the kill"
# mpiexec forwards rank 0's last output after rank 0 has ended: wait for it (a bounded wait, not
# a fixed pause that a loaded machine can outlast).
(wait_for_line "$dir/out2.txt" "wavetrain: rank 0: rank 1 \(pid $victim\) is gone: .*exit status 5" 30) ||
  { cat "$dir/out2.txt"; fail "rank 0's watchdog did not report rank 1 as gone"; }
cat "$dir/out2.txt"
kill_matching "$dir/run2"  # this mpiexec may wait for ever on its own

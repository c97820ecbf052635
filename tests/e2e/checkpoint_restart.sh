#!/usr/bin/env bash
# Checkpoint and restart, the way a batch job lives through them:
#  1. a run stopped by a real SIGUSR1 (what a scheduler sends before the wall time) exits 75 with
#     a checkpoint; --restart finishes it, and every loss after the resume is bitwise identical
#     to an uninterrupted run (17 significant digits in metrics.csv), on 1 and on 2 ranks;
#  2. a 2-rank checkpoint resumes on 1 and on 4 ranks with the same global batch: the first
#     resumed step's loss matches the 2-rank run to float rounding;
#  3. --walltime stops the run with a checkpoint before the time runs out;
#  4. kill -9 at random moments while checkpoints are written every step never leaves the run
#     unresumable, and the resumed run still reproduces the uninterrupted losses.
# The runs that are signalled or killed (1., 4.) have a step count they cannot reach, so that only
# the test stops them, on any machine; the step count of the comparison is then chosen past where
# they stopped. Their lr schedule is therefore one that does not depend on the step count
# (`step`: x0.9 every 10 steps, after the warmup), unlike cosine, so that the stopped run and the
# uninterrupted one still train alike; a resume at the wrong step or with the wrong lr shows.
source "$(dirname "$0")/lib/common.bash"
source "$(dirname "$0")/lib/processes.bash"
trap 'kill_matching "$dir/"; rm -rf "$dir"' EXIT  # a run that cannot end must not outlive the test
data=$(fashion_mnist_h5)
deck="$WT_SOURCE_DIR/inputs/fashion_mlp.toml"
common=(--quiet --set "data.path=\"$data\"" --set train.log_every_steps=1
        --set train.eval_every_epoch=false --set lr_schedule.warmup_steps=20)

losses() { awk -F, '$1=="train" { print $2, $4 }' "$1/metrics.csv"; }
step_of() { sed -n 's/^step_0*\([0-9][0-9]*\)\.h5$/\1/p' "$1"; }  # a `latest` file's step
lr_by_step=(--set lr_schedule.kind=step --set lr_schedule.step_size=10 --set lr_schedule.gamma=0.9)

# 1. SIGUSR1 -> 75 -> --restart -> bitwise identical losses.
common+=(--set train.global_batch=256)
for ranks in 1 2; do
  mpiexec -n $ranks "$WAVETRAIN" "$deck" "${common[@]}" "${lr_by_step[@]}" --steps $ENDLESS_STEPS \
    --run-dir "$dir/cut$ranks" &
  pid=$!
  # 30 steps logged: well past the warmup, and the ranks handle signals.
  wait_for_line "$dir/cut$ranks/metrics.csv" '^train,30,' 120 $pid
  kill -USR1 $pid
  rc=0; wait $pid || rc=$?
  [[ $rc == 75 ]] || fail "$ranks rank(s): SIGUSR1 gave exit status $rc, expected 75"
  stopped=$(cat "$dir/cut$ranks/checkpoints/latest")
  steps=$(($(step_of "$dir/cut$ranks/checkpoints/latest") + 100))  # 100 steps after the resume
  mpiexec -n $ranks "$WAVETRAIN" "$deck" "${common[@]}" "${lr_by_step[@]}" --steps $steps \
    --run-dir "$dir/full$ranks"
  mpiexec -n $ranks "$WAVETRAIN" "$deck" "${common[@]}" "${lr_by_step[@]}" --steps $steps \
    --run-dir "$dir/cut$ranks" --restart
  grep -q "resumed from .*$stopped" "$dir/cut$ranks/log.txt" || fail "no resume line in log.txt"
  diff <(losses "$dir/full$ranks") <(losses "$dir/cut$ranks") >/dev/null ||
    fail "$ranks rank(s): losses after resuming from $stopped differ from the uninterrupted run"
  echo "ok: $ranks rank(s): stopped by SIGUSR1 at $stopped (exit 75), resumed, $steps losses bitwise identical"
done

# 2. A 2-rank checkpoint resumed on 1 and 4 ranks.
mpiexec -n 2 "$WAVETRAIN" "$deck" "${common[@]}" --steps 40 --run-dir "$dir/two" \
  --set checkpoint.every_steps=20
for ranks in 1 4; do
  cp -r "$dir/two" "$dir/re$ranks"
  rm "$dir/re$ranks/checkpoints/step_00000040.h5"  # latest now names a missing file: falls back
  mpiexec -n $ranks --oversubscribe "$WAVETRAIN" "$deck" "${common[@]}" --steps 40 \
    --run-dir "$dir/re$ranks" --restart
  grep -q "checkpoint written by 2 ranks, resuming on $ranks (global batch 256 unchanged)" \
    "$dir/re$ranks/log.txt" || fail "$ranks ranks: no rank-count change line"
  read -r a b < <(paste -d' ' <(losses "$dir/two" | awk '$1==21 {print $2}') \
                             <(losses "$dir/re$ranks" | awk '$1==21 {print $2}'))
  awk -v a="$a" -v b="$b" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 1e-6 * a) }' ||
    fail "$ranks ranks: first resumed loss $b differs from the 2-rank run's $a"
  [[ $(losses "$dir/re$ranks" | wc -l) == 40 ]] || fail "$ranks ranks: expected 40 loss rows"
  echo "ok: 2-rank checkpoint resumed on $ranks rank(s): step 21 loss $b vs $a"
done

# 3. --walltime: stop with a checkpoint while there is still time.
rc=0
mpiexec -n 2 "$WAVETRAIN" "$deck" "${common[@]}" --steps $ENDLESS_STEPS --run-dir "$dir/wall" \
  --walltime 8 --set checkpoint.walltime_margin=4 || rc=$?
[[ $rc == 75 ]] || fail "--walltime: exit status $rc, expected 75"
grep -q "the wall time runs out" "$dir/wall/log.txt" || fail "--walltime: no stop line"
[[ -f "$dir/wall/checkpoints/$(cat "$dir/wall/checkpoints/latest")" ]] || fail "no checkpoint"
echo "ok: --walltime 8 stopped at $(cat "$dir/wall/checkpoints/latest") with exit 75"

# 4. kill -9 during frequent checkpoint writes, three times, then finish with restart = auto.
# Each attempt runs without a reachable end and is killed at a random step: the first checkpoint
# at or past a random 5 to 30 steps beyond where it resumed (a random moment of the every-step
# write cycle: the kill may land inside a write). Then the uninterrupted run and the resumed one
# both go 50 steps past the last checkpoint.
auto=(--set checkpoint.every_steps=1 --set checkpoint.keep=2 --set checkpoint.restart=auto)
latest=0
for attempt in 1 2 3; do
  mpiexec -n 2 "$WAVETRAIN" "$deck" "${common[@]}" "${lr_by_step[@]}" "${auto[@]}" \
    --steps $ENDLESS_STEPS --run-dir "$dir/kill" &
  pid=$!
  target=$((latest + 5 + RANDOM % 26))
  deadline=$((SECONDS + 120))
  until [[ -s $dir/kill/checkpoints/latest ]] &&
    (($(step_of "$dir/kill/checkpoints/latest") >= target)); do
    kill -0 $pid 2>/dev/null || fail "attempt $attempt ended before the kill"
    ((SECONDS < deadline)) || fail "attempt $attempt: no checkpoint of step $target within 120 s"
    sleep 0.02
  done
  pkill -9 -f -- "--run-dir $dir/kill" || true
  wait $pid || true
  latest=$(step_of "$dir/kill/checkpoints/latest")
  echo "killed attempt $attempt at or after the checkpoint of step $target; latest: step $latest"
done
steps=$((latest + 50))
mpiexec -n 2 "$WAVETRAIN" "$deck" "${common[@]}" "${lr_by_step[@]}" --steps $steps \
  --run-dir "$dir/killfull"
mpiexec -n 2 "$WAVETRAIN" "$deck" "${common[@]}" "${lr_by_step[@]}" "${auto[@]}" --steps $steps \
  --run-dir "$dir/kill"
[[ $(losses "$dir/kill" | wc -l) == "$steps" ]] || fail "the resumed run has not $steps loss rows"
diff <(losses "$dir/killfull") <(losses "$dir/kill") >/dev/null ||
  fail "after three kill -9s the resumed losses differ from the uninterrupted run"
echo "ok: three kill -9s during checkpoint writes; resumed run reproduces all $steps losses"

#!/usr/bin/env bash
# End to end: a run directory's earlier run is never silently written over (job/earlier_run.hpp).
#   1. A deck without [run] name writes runs/<deck file stem>, not runs/run.
#   2. Running it again into the same directory is refused, exit 2, with one message naming the
#      directory, --restart, --overwrite and --run-dir; the earlier run's files are untouched,
#      also when the refusal comes on 2 ranks (every rank ends, none hangs) and for
#      schedule.kind = "auto" (before its trials write anything).
#   3. --restart resumes the earlier run (and says so): its first steps' metrics stay.
#   4. checkpoint.restart = "auto" (what a requeued batch job has) resumes too.
#   5. --overwrite replaces it: its metrics, summary and checkpoints go, the new run's come
#      (also its checkpoints in a checkpoint.dir outside the run directory).
#   6. --overwrite with --restart is a command-line error.
source "$(dirname "$0")/lib/common.bash"
data=$(fashion_mnist_h5)
mkdir -p "$dir/decks"
cat >"$dir/decks/lr_sweep.toml" <<EOF
[data]
path = "$data"
[model]
file = "$WT_SOURCE_DIR/models/mlp.toml"
[train]
global_batch = 64
log_every_steps = 1
eval_every_epoch = false
EOF
run() { (cd "$dir" && "$WAVETRAIN" decks/lr_sweep.toml --quiet "$@"); }
runs="$dir/runs/lr_sweep"
train_steps() { awk -F, '$1=="train" { print $2 }' "$1" | tr '\n' ' '; }

# 1. The default run directory names the deck.
run --steps 4 >"$dir/first.out"
[[ -f $runs/summary.json ]] || fail "no runs/lr_sweep/summary.json: the run directory does not name the deck"
[[ ! -e $dir/runs/run ]] || fail "runs/run was written: the default run.name still is 'run'"
[[ $(train_steps "$runs/metrics.csv") == "1 2 3 4 " ]] || fail "first run: steps $(train_steps "$runs/metrics.csv")"
snapshot() { (cd "$runs" && md5sum metrics.csv summary.json deck.toml log.txt checkpoints/*); }
snapshot >"$dir/before.md5"
echo "ok 1: a deck without run.name writes runs/lr_sweep"

# 2. Again into the same directory: refused, nothing touched, on 1 and on 2 ranks.
refused() {  # name command...
  local name=$1; shift
  set +e
  "$@" >"$dir/$name.out" 2>"$dir/$name.err"
  local rc=$?
  set -e
  [[ $rc == 2 ]] || { cat "$dir/$name.err"; fail "$name: exit status $rc, expected 2"; }
  for part in "runs/lr_sweep: the run directory holds a finished run" "metrics.csv with 4 rows" \
              --restart --overwrite --run-dir; do
    grep -qF -- "$part" "$dir/$name.err" || { cat "$dir/$name.err"; fail "$name: message lacks '$part'"; }
  done
  # One message (mpiexec adds its own lines about the exit status).
  [[ $(grep -c "^wavetrain: " "$dir/$name.err") == 1 ]] || { cat "$dir/$name.err"; fail "$name: not one message"; }
  diff "$dir/before.md5" <(snapshot) || fail "$name: the earlier run's files changed"
  echo "ok 2 ($name): $(grep "^wavetrain: " "$dir/$name.err")"
}
refused again run --steps 4 --set optimizer.lr=0.2
# schedule.kind = "auto" is refused before its ranking and trials write into the directory.
refused auto run --steps 4 --set schedule.kind=auto
[[ ! -e $runs/auto.csv && ! -e $runs/auto_measure ]] || fail "auto: refused, but wrote auto.csv or trials"
refused two_ranks bash -c "cd '$dir' && timeout 120 mpiexec -n 2 '$WAVETRAIN' decks/lr_sweep.toml --quiet --steps 4"

# 3. --restart resumes it from its end checkpoint and says so; the first 4 steps' rows stay.
head -5 "$runs/metrics.csv" >"$dir/first_rows.csv"
run --steps 6 --restart >"$dir/restart.out"
grep -q "held a finished run .*: resuming it" "$runs/log.txt" || fail "--restart: the log does not say it resumes"
grep -q "resumed from .*step_00000004.h5" "$runs/log.txt" || fail "--restart: no resume from step 4"
[[ $(train_steps "$runs/metrics.csv") == "1 2 3 4 5 6 " ]] || fail "--restart: steps $(train_steps "$runs/metrics.csv")"
diff "$dir/first_rows.csv" <(head -5 "$runs/metrics.csv") || fail "--restart: the earlier rows changed"
echo "ok 3: --restart resumed at step 4 and went on to 6"

# 4. checkpoint.restart = "auto" resumes too.
run --steps 8 --set checkpoint.restart=auto >"$dir/auto.out"
grep -q "resumed from .*step_00000006.h5" "$runs/log.txt" || fail "auto: no resume from step 6"
[[ $(train_steps "$runs/metrics.csv") == "1 2 3 4 5 6 7 8 " ]] || fail "auto: steps $(train_steps "$runs/metrics.csv")"
echo "ok 4: checkpoint.restart = auto resumed at step 6"

# 5. --overwrite replaces it.
run --steps 3 --overwrite --set optimizer.lr=0.2 >"$dir/overwrite.out"
[[ $(train_steps "$runs/metrics.csv") == "1 2 3 " ]] || fail "--overwrite: steps $(train_steps "$runs/metrics.csv")"
grep -q "held a finished run (summary.json, metrics.csv with 8 rows): removed it (--overwrite)" \
  "$runs/log.txt" || { cat "$runs/log.txt"; fail "--overwrite: the log does not say what it removed"; }
! grep -q "resumed from" "$runs/log.txt" || fail "--overwrite: the earlier run's log was kept"
grep -q "lr = 0.2" "$runs/deck.toml" || fail "--overwrite: deck.toml is not the new run's"
ls "$runs/checkpoints" >"$dir/ckpts.txt"
grep -q "step_00000003.h5" "$dir/ckpts.txt" || fail "--overwrite: no checkpoint of the new run"
! grep -qE "step_0000000[4-8].h5" "$dir/ckpts.txt" || fail "--overwrite: the earlier run's checkpoints stayed: $(cat "$dir/ckpts.txt")"
echo "ok 5: --overwrite replaced the 8-step run with a 3-step one"

# 5b. A checkpoint.dir outside the run directory: --overwrite removes the earlier run's
#     checkpoints there too (they carry its run_id), so that none of them is resumed later.
ck=(--set "checkpoint.dir=\"$dir/shared_ck\"" --run-dir "$dir/outside")
run --steps 4 "${ck[@]}" >/dev/null
[[ -f $dir/shared_ck/step_00000004.h5 ]] || fail "outside: no step-4 checkpoint in $dir/shared_ck"
run --steps 2 "${ck[@]}" --overwrite >/dev/null
[[ -f $dir/shared_ck/step_00000002.h5 && ! -e $dir/shared_ck/step_00000004.h5 ]] ||
  fail "outside: --overwrite left the earlier run's checkpoints: $(ls "$dir/shared_ck")"
[[ $(cat "$dir/shared_ck/latest") == step_00000002.h5 ]] || fail "outside: latest is $(cat "$dir/shared_ck/latest")"
echo "ok 5b: --overwrite removed the earlier run's checkpoints from a checkpoint.dir outside it"

# 6. --overwrite and --restart contradict each other.
set +e
run --steps 3 --overwrite --restart >/dev/null 2>"$dir/both.err"
rc=$?
set -e
[[ $rc == 2 ]] && grep -q -- "--overwrite" "$dir/both.err" || { cat "$dir/both.err"; fail "--overwrite --restart: exit $rc"; }
echo "ok 6: $(cat "$dir/both.err")"

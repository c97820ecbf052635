#!/usr/bin/env bash
# Two runs, one checkpoint.dir (issue 17 §3): a checkpoint directory has one owner at a time, and
# a run never resumes another run's checkpoint by accident.
#   1. While run A (2 ranks, run directory A) trains with checkpoint.dir = an absolute path, run B
#      (run directory B, same checkpoint.dir) exits 2 at once, naming the directory and the
#      holder (A's rank 0 pid, host and run directory); A carries on and stops cleanly (SIGUSR1).
#   2. B --restart finds A's `latest`: exit 2 naming both runs (their ids and directories); the
#      checkpoint directory is left as it was.
#   3. B --restart-from A's checkpoint: accepted on purpose, resumes at A's step and finishes.
#   4. B --restart with a changed deck (optimizer.lr): its own checkpoint, a legitimate resume.
#   5. A --restart now finds B's `latest`: refused the same way.
#   6. A fresh run C (no --restart) into the directory B last wrote: refused, nothing changed.
#   7. B's run directory without its run_id file: refused as a lost identity (how to restore it),
#      not as another run's checkpoint; restored, B resumes.
# A is given more steps than it can finish, and B is started only once A has written a
# checkpoint: no sleep decides anything.
source "$(dirname "$0")/lib/common.bash"
source "$(dirname "$0")/lib/processes.bash"
data=$(fashion_mnist_h5)
cd "$dir"
trap 'kill_matching "$dir/"; rm -rf "$dir"' EXIT
ck=$dir/shared_checkpoints
deck="$WT_SOURCE_DIR/inputs/fashion_mlp.toml"
train() {  # ranks run-dir [wavetrain options...]
  timeout 120 mpiexec -n "$1" "$WAVETRAIN" "$deck" --set "data.path=\"$data\"" \
    --set train.eval_every_epoch=false --set checkpoint.every_steps=100 \
    --set "checkpoint.dir=\"$ck\"" --run-dir "$2" "${@:3}"
}
one_message() {  # file: exactly one wavetrain error line
  [[ $(grep -c "^wavetrain: .*error" "$1") == 1 ]] || fail "not exactly one error message in $1"
  ! grep -q "internal error\|stalled\|killed or crashed" "$1" || fail "a wrong diagnosis in $1"
}

# 1. B while A holds the checkpoint directory.
train 2 "$dir/A" --steps 1000000 --set train.log_every_steps=100 >a1.txt 2>&1 &
first=$!
deadline=$((SECONDS + 60))
until [[ -s $ck/latest ]]; do
  kill -0 "$first" 2>/dev/null || { cat a1.txt; fail "run A ended before its first checkpoint"; }
  ((SECONDS < deadline)) || { cat a1.txt; fail "run A wrote no checkpoint in 60 s"; }
  sleep 0.1
done
holder=$(rank_pid "$dir/A" 0)
[[ -n $holder ]] || fail "no rank 0 of run A"
status=0
train 2 "$dir/B" --steps 20 >b1.txt 2>&1 || status=$?
cat b1.txt
echo "case 1: B while A holds $ck: exit $status"
[[ $status == 2 ]] || fail "B exited $status, expected 2"
grep -qF "wavetrain: error: $ck: checkpoint directory in use by another wavetrain run (process $holder on host $(hostname) (run directory $dir/A) holds $ck/.checkpoint.lock)" \
  b1.txt || fail "the refusal does not name the directory and the holder"
grep -q "checkpoint.dir" b1.txt || fail "the refusal does not name the key"
one_message b1.txt
! grep -q "checkpoint .* written" b1.txt || fail "B wrote a checkpoint"
kill -0 "$first" || fail "run A died"
kill -USR1 "$holder"
status=0
wait "$first" || status=$?
[[ $status == 75 ]] || { cat a1.txt; fail "run A ended with $status, expected 75"; }
latest_a=$(cat "$ck/latest")
step_a=$(sed 's/^step_0*\([0-9]*\)\.h5$/\1/' <<<"$latest_a")
id_a=$(cat "$dir/A/run_id")
echo "ok: B refused while A held the directory; A stopped at step $step_a (run $id_a)"

# 2. B --restart from A's latest.
snapshot() { (cd "$ck" && ls && md5sum latest step_*.h5); }  # the lock file names its holder
snapshot >before.txt
status=0
train 2 "$dir/B" --steps $((step_a + 20)) --restart >b2.txt 2>&1 || status=$?
cat b2.txt
id_b=$(cat "$dir/B/run_id")
[[ -n $id_b && $id_b != "$id_a" ]] || fail "B has no identity of its own ($id_b)"
echo "case 2: B --restart with A's latest: exit $status"
[[ $status == 2 ]] || fail "B exited $status, expected 2"
grep -qF "wavetrain: error: $ck/$latest_a: run_id: written by another run, run $id_a (directory $dir/A), not by this run $id_b (directory $dir/B)" \
  b2.txt || fail "the refusal does not name both runs"
grep -qF -- "--restart-from $ck/$latest_a" b2.txt || fail "the refusal does not say how to resume on purpose"
one_message b2.txt
! grep -q "resumed from" b2.txt || fail "B resumed anyway"
snapshot >after.txt
cmp -s before.txt after.txt || fail "the refused run changed $ck"
echo "ok: B --restart refused, naming runs $id_a and $id_b"

# 3. B --restart-from A's checkpoint, on purpose.
status=0
train 2 "$dir/B" --steps $((step_a + 20)) --restart-from "$ck/$latest_a" >b3.txt 2>&1 || status=$?
cat b3.txt
echo "case 3: B --restart-from $latest_a: exit $status"
[[ $status == 0 ]] || fail "B exited $status, expected 0"
grep -qF "$ck/$latest_a was written by run $id_a (directory $dir/A); starting from it as --restart-from asks" \
  b3.txt || fail "B does not say whose checkpoint it starts from"
grep -qF "resumed from $ck/$latest_a at step $step_a" b3.txt || fail "B did not resume at step $step_a"
[[ $(last_metric "$dir/B/metrics.csv" train step) == $((step_a + 20)) ]] || fail "B did not finish"
latest_b=$(cat "$ck/latest")
[[ $latest_b == $(printf 'step_%08d.h5' $((step_a + 20))) ]] || fail "latest is $latest_b"
echo "ok: B started from A's step $step_a on purpose and wrote $latest_b"

# 4. B resumes its own checkpoint with a changed deck.
status=0
train 2 "$dir/B" --steps $((step_a + 30)) --restart --set optimizer.lr=0.01 >b4.txt 2>&1 || status=$?
cat b4.txt
echo "case 4: B --restart with optimizer.lr changed: exit $status"
[[ $status == 0 ]] || fail "B exited $status, expected 0"
grep -qF "resumed from $ck/$latest_b at step $((step_a + 20))" b4.txt || fail "B did not resume its own checkpoint"
! grep -q "warning" b4.txt || fail "a warning for a legitimate resume"
grep -q "^lr = 0.01" "$dir/B/deck.toml" || fail "the changed deck is not the one recorded"

# 5. A --restart now finds B's latest.
status=0
train 1 "$dir/A" --steps $((step_a + 40)) --restart >a5.txt 2>&1 || status=$?
cat a5.txt
echo "case 5: A --restart with B's latest: exit $status"
[[ $status == 2 ]] || fail "A exited $status, expected 2"
grep -qF "run_id: written by another run, run $id_b (directory $dir/B), not by this run $id_a (directory $dir/A)" \
  a5.txt || fail "the refusal does not name both runs"
echo "ok: a changed deck resumes; A is refused B's checkpoint"

# 6. A fresh run C (no --restart) with the same checkpoint.dir, whose `latest` is B's: it would
#    write over B's checkpoints, so it is refused naming both runs, and the directory is unchanged.
snapshot >before.txt
status=0
train 1 "$dir/C" --steps 5 >c6.txt 2>&1 || status=$?
cat c6.txt
id_c=$(cat "$dir/C/run_id" 2>/dev/null || true)
echo "case 6: fresh run C over B's checkpoints: exit $status"
[[ $status == 2 ]] || fail "C exited $status, expected 2"
grep -qF "checkpoint.dir: $ck holds the checkpoints of run $id_b (directory $dir/B), and this run $id_c (directory $dir/C) would write over them" \
  c6.txt || fail "the refusal of a fresh run does not name both runs"
one_message c6.txt
snapshot >after.txt
cmp -s before.txt after.txt || fail "the refused fresh run changed $ck"
echo "ok: a fresh run does not write over another run's checkpoints"

# 7. B's run directory loses its run_id (issue 33): a resume says so, not that another run wrote
#    the checkpoint, makes no new identity, and resumes once the file is restored.
latest_b=$(cat "$ck/latest")
step_b=$(sed 's/^step_0*\([0-9]*\)\.h5$/\1/' <<<"$latest_b")
rm "$dir/B/run_id"
status=0
train 1 "$dir/B" --steps $((step_b + 10)) --restart >b7.txt 2>&1 || status=$?
cat b7.txt
echo "case 7: B --restart without its run_id: exit $status"
[[ $status == 2 ]] || fail "B exited $status, expected 2"
grep -qF "$dir/B: run_id: $dir/B/run_id is missing: the run directory lost the file that names its run, and $ck/$latest_b was written by run $id_b from this same directory: restore it (echo $id_b > $dir/B/run_id) and resubmit to resume it" \
  b7.txt || fail "the refusal does not say the run_id file is missing and how to restore it"
one_message b7.txt
[[ ! -e $dir/B/run_id ]] || fail "the refused start made a new identity: $(cat "$dir/B/run_id")"
echo "$id_b" >"$dir/B/run_id"
train 1 "$dir/B" --steps $((step_b + 10)) --restart --quiet >b7b.txt 2>&1 || { cat b7b.txt; fail "B did not resume once its run_id was restored"; }
echo "ok: a lost run_id is named as such, and restoring it resumes the run"

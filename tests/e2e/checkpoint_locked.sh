#!/usr/bin/env bash
# A checkpoint held open for writing by another process (issue 17 §5): h5py opens the newest one
# 'r+' and keeps it open (HDF5 holds an exclusive flock on it meanwhile). That is a lock, not
# damage:
#   1. --restart exits 2 within seconds saying the checkpoint is locked, by which process, and in
#      use rather than corrupted; it does not fall back to the older checkpoint and writes none.
#   2. --restart --skip-locked skips it, says so, falls back to the previous checkpoint, resumes
#      at its step and finishes.
# The holder signals readiness through a file once it has the file open: no sleep decides.
source "$(dirname "$0")/lib/common.bash"
source "$(dirname "$0")/lib/processes.bash"
py=${WT_PYTHON:-/usr/bin/python3}
"$py" -c "import h5py" 2>/dev/null || { echo "h5py missing: skipped"; exit 77; }
data=$(fashion_mnist_h5)
cd "$dir"
holder=
trap '[[ -n $holder ]] && kill -KILL "$holder" 2>/dev/null; kill_matching "$dir/run"; rm -rf "$dir"' EXIT
ck=$dir/run/checkpoints
train() {  # [wavetrain options...]
  timeout 120 mpiexec -n 2 "$WAVETRAIN" "$WT_SOURCE_DIR/inputs/fashion_mlp.toml" \
    --set "data.path=\"$data\"" --set train.eval_every_epoch=false \
    --set checkpoint.every_steps=10 --run-dir "$dir/run" "$@"
}

train --steps 20 --quiet || fail "the first run failed"
[[ $(cat "$ck/latest") == step_00000020.h5 ]] || fail "latest is $(cat "$ck/latest")"

"$py" - "$ck/step_00000020.h5" "$dir/holder_ready" <<'PY' &
import sys, time, h5py
f = h5py.File(sys.argv[1], "r+")  # held open for writing until this process is killed
open(sys.argv[2], "w").close()
while True:
    time.sleep(3600)
PY
holder=$!
deadline=$((SECONDS + 30))
until [[ -e holder_ready ]]; do
  kill -0 "$holder" 2>/dev/null || fail "the h5py holder could not open the checkpoint"
  ((SECONDS < deadline)) || fail "the h5py holder did not open the checkpoint in 30 s"
  sleep 0.1
done
snapshot() { (cd "$ck" && ls && md5sum latest step_*.h5); }
snapshot >before.txt

# 1. Locked: stop, do not fall back.
status=0
start=$SECONDS
train --steps 30 --restart >out1.txt 2>&1 || status=$?
took=$((SECONDS - start))
cat out1.txt
echo "case 1: newest checkpoint locked by process $holder: exit $status after $took s"
[[ $status == 2 ]] || fail "exit status $status, expected 2"
((took <= 30)) || fail "took $took s"
grep -qF "wavetrain: error: $ck/step_00000020.h5: locked: process $holder (python3) holds a write lock on it: the checkpoint is in use, not damaged" \
  out1.txt || fail "the message does not say locked (by process $holder)"
grep -q -- "--skip-locked" out1.txt || fail "the message does not name the option to skip it"
! grep -qi "corrupt\|truncated" out1.txt || fail "a lock was called damage"
! grep -q "resumed from\|fell back\|skipping" out1.txt || fail "fell back past the locked checkpoint"
[[ $(grep -c "^wavetrain: .*error" out1.txt) == 1 ]] || fail "not exactly one error message"
snapshot >after.txt
cmp -s before.txt after.txt || fail "the refused run changed $ck"
echo "ok: a locked checkpoint stops the resume with status 2"

# 2. --skip-locked: fall back, and say so.
status=0
train --steps 25 --restart --skip-locked >out2.txt 2>&1 || status=$?
cat out2.txt
echo "case 2: --skip-locked: exit $status"
[[ $status == 0 ]] || fail "exit status $status, expected 0"
grep -qF "wavetrain: warning: skipping checkpoint $ck/step_00000020.h5: locked: process $holder (python3) holds a write lock on it (--skip-locked)" \
  out2.txt || fail "no warning naming the skipped checkpoint"
grep -q "fell back to the previous good checkpoint" out2.txt || fail "the fallback is not reported"
grep -qF "resumed from $ck/step_00000010.h5 at step 10" out2.txt || fail "did not resume at step 10"
[[ $(last_metric "$dir/run/metrics.csv" train step) == 25 ]] || fail "did not train to step 25"
[[ $(cat "$ck/latest") == step_00000025.h5 ]] || fail "latest is $(cat "$ck/latest")"
echo "ok: --skip-locked fell back to step 10 and finished"

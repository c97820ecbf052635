#!/usr/bin/env bash
# Everything that steers a resume is checksummed (issue 10 §5): a checkpoint whose `step`
# attribute was edited (here with h5py, as a user might) is damage like any other. restart=auto
# warns naming the file, falls back to the previous good checkpoint, resumes at its step, trains
# to the end and exits 0 (it used to "resume at step 999999" and exit 0 without training).
source "$(dirname "$0")/lib/common.bash"
py=${WT_PYTHON:-/usr/bin/python3}
"$py" -c "import h5py" 2>/dev/null || { echo "h5py missing: skipped"; exit 77; }
data=$(fashion_mnist_h5)
deck="$WT_SOURCE_DIR/inputs/fashion_mlp.toml"
common=(--quiet --set "data.path=\"$data\"" --set train.eval_every_epoch=false
  --set checkpoint.every_steps=10 --run-dir "$dir/run")

mpiexec -n 2 "$WAVETRAIN" "$deck" "${common[@]}" --steps 20
ck="$dir/run/checkpoints"
[[ $(cat "$ck/latest") == step_00000020.h5 ]] || fail "latest is not step 20"
"$py" - "$ck/step_00000020.h5" <<'PY'
import sys, h5py
with h5py.File(sys.argv[1], "r+") as f:
    f.attrs.modify("step", 999999)  # same type and shape: only the value changes
PY

rc=0
mpiexec -n 2 "$WAVETRAIN" "$deck" "${common[@]}" --steps 30 --set checkpoint.restart=auto \
  >"$dir/out.txt" 2>&1 || rc=$?
cat "$dir/out.txt" "$dir/run/log.txt"
[[ $rc == 0 ]] || fail "exit status $rc, expected 0"
grep -q "warning: skipping unusable checkpoint: $ck/step_00000020.h5: header_checksum: checksum mismatch" \
  "$dir/run/log.txt" || fail "no warning naming the edited checkpoint"
grep -q "resumed from $ck/step_00000010.h5 at step 10" "$dir/run/log.txt" ||
  fail "did not fall back to step 10"
! grep -q "999999" "$dir/run/log.txt" || fail "the edited step was believed"
# Trained steps 10..30 again: the metrics' last train row is step 30 and the final checkpoint too.
[[ $(cat "$ck/latest") == step_00000030.h5 ]] || fail "latest is $(cat "$ck/latest")"
echo "ok: edited step attribute detected, fell back to step 10, resumed and finished (exit 0)"

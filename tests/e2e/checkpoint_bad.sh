#!/usr/bin/env bash
# Bad checkpoints get one clear message and exit status 2, never a crash; restart = "auto" falls
# back past a damaged newest checkpoint to the previous good one and says so.
source "$(dirname "$0")/lib/common.bash"
data=$(fashion_mnist_h5)
deck="$WT_SOURCE_DIR/inputs/fashion_mlp.toml"
common=(--quiet --set "data.path=\"$data\"" --set train.eval_every_epoch=false)

expect_error() {  # what pattern command...
  local what=$1 pattern=$2; shift 2
  local rc=0
  "$@" >"$dir/out" 2>&1 || rc=$?
  [[ $rc == 2 ]] || { cat "$dir/out"; fail "$what: exit status $rc, expected 2"; }
  grep -q -- "$pattern" "$dir/out" || { cat "$dir/out"; fail "$what: message lacks '$pattern'"; }
  [[ $(grep -c "error" "$dir/out") == 1 ]] || { cat "$dir/out"; fail "$what: not one message"; }
  echo "ok: $what: $(grep error "$dir/out")"
}

mpiexec -n 2 "$WAVETRAIN" "$deck" "${common[@]}" --steps 20 --set checkpoint.every_steps=10 \
  --run-dir "$dir/run"
ck="$dir/run/checkpoints"
[[ -f "$ck/step_00000010.h5" && -f "$ck/step_00000020.h5" ]] || fail "checkpoints missing"

expect_error "--restart without a checkpoint" "no checkpoint to resume from" \
  mpiexec -n 2 "$WAVETRAIN" "$deck" "${common[@]}" --steps 20 --run-dir "$dir/empty" --restart
expect_error "a different model" "checkpoint" \
  mpiexec -n 2 "$WAVETRAIN" "$deck" "${common[@]}" --steps 30 --run-dir "$dir/run" --restart \
  --set "model.file=\"$WT_SOURCE_DIR/models/lenet.toml\""
expect_error "a different global batch" "train.global_batch" \
  mpiexec -n 2 "$WAVETRAIN" "$deck" "${common[@]}" --steps 30 --run-dir "$dir/run" --restart \
  --set train.global_batch=32

# Truncate the newest: auto falls back to step 10 and says so.
cp -r "$dir/run" "$dir/trunc"
truncate -s 5000 "$dir/trunc/checkpoints/step_00000020.h5"
mpiexec -n 2 "$WAVETRAIN" "$deck" "${common[@]}" --steps 30 --run-dir "$dir/trunc" \
  --set checkpoint.restart=auto
grep -q "skipping unusable checkpoint: .*step_00000020.h5" "$dir/trunc/log.txt" ||
  fail "no warning about the truncated checkpoint"
grep -q "resumed from .*step_00000010.h5 at step 10" "$dir/trunc/log.txt" ||
  fail "did not fall back to step 10"
echo "ok: truncated newest checkpoint skipped, resumed from step 10"

# Every checkpoint damaged: exit 2 naming the newest's problem.
cp -r "$dir/run" "$dir/allbad"
for f in "$dir"/allbad/checkpoints/step_*.h5; do printf 'garbage' >"$f"; done
expect_error "only damaged checkpoints" "no usable checkpoint (2 tried)" \
  mpiexec -n 2 "$WAVETRAIN" "$deck" "${common[@]}" --steps 30 --run-dir "$dir/allbad" --restart

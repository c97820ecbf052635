#!/usr/bin/env bash
# A waves checkpoint resumed on another rank count (issue 33 §8): a waves step trains one global
# batch per rank, so its steps per epoch, and the step that is the data cursor, depend on the rank
# count. Resuming a 2-rank checkpoint on 1 or 4 ranks must exit 2 naming the schedule and both
# rank counts (it used to blame the dataset: "a different dataset?"), and on 2 ranks it resumes.
source "$(dirname "$0")/lib/common.bash"
data=$(fashion_mnist_h5)
run=(--set "data.path=\"$data\"" --set schedule.kind=waves --set train.eval_every_epoch=false
  --run-dir "$dir/run")
deck="$WT_SOURCE_DIR/inputs/fashion_mlp.toml"
mpiexec -n 2 "$WAVETRAIN" "$deck" "${run[@]}" --steps 2 --quiet >"$dir/first.out" 2>&1 ||
  { cat "$dir/first.out"; fail "the 2-rank waves run failed"; }
for ranks in 1 4; do
  rc=0
  timeout 120 mpiexec -n $ranks "$WAVETRAIN" "$deck" "${run[@]}" --steps 4 --restart >"$dir/$ranks.out" 2>&1 || rc=$?
  grep "^wavetrain: error" "$dir/$ranks.out" || true
  [[ $rc == 2 ]] || { cat "$dir/$ranks.out"; fail "$ranks ranks: exit $rc, expected 2"; }
  grep -q "step_00000002.h5: world_size: the checkpoint was written by schedule 'waves' on 2 ranks, this run has $ranks: its step trains one global batch per rank.*resume on 2 ranks" \
    "$dir/$ranks.out" || fail "$ranks ranks: the message does not name the schedule and the rank counts"
  ! grep -q "different dataset" "$dir/$ranks.out" || fail "$ranks ranks: blamed the dataset"
done
mpiexec -n 2 "$WAVETRAIN" "$deck" "${run[@]}" --steps 4 --restart --quiet >"$dir/resumed.out" 2>&1 ||
  { cat "$dir/resumed.out"; fail "resuming on 2 ranks failed"; }
echo "ok: a 2-rank waves checkpoint is refused on 1 and 4 ranks naming both, and resumes on 2"

#!/usr/bin/env bash
# ticktock checkpoints hold both waves' replicas (parameters, batchnorm buffers, optimizer state)
# and the local gradient each wave keeps for the next step (Wavelet Eq. 1). A 2-rank run writes
# checkpoints every 10 steps; resuming it from step 10 on 2 ranks reproduces every later loss
# bitwise, and on 1 rank the first resumed loss to float rounding (the kept gradients' rows are
# summed onto one rank, which changes only the summation order).
source "$(dirname "$0")/lib/common.bash"
data=$(fashion_mnist_h5)
deck="$WT_SOURCE_DIR/inputs/fashion_mlp.toml"
common=(--quiet --set "data.path=\"$data\"" --set train.log_every_steps=1
  --set train.eval_every_epoch=false --set 'schedule.kind="ticktock"' --set checkpoint.keep=5)

losses() { awk -F, '$1=="train" { print $2, $4 }' "$1/metrics.csv"; }

mpiexec -n 2 "$WAVETRAIN" "$deck" "${common[@]}" --steps 30 --set checkpoint.every_steps=10 \
  --run-dir "$dir/full"
[[ $(losses "$dir/full" | wc -l) == 30 ]] || fail "expected 30 loss rows"
/usr/bin/python3 - "$dir/full/checkpoints/step_00000010.h5" <<'PY' || fail "checkpoint layout"
import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    assert int(f.attrs["replicas"]) == 2, dict(f.attrs)
    for group in ("stages/0/values", "replicas/1/stages/0/values", "kept/0/0", "kept/1/0"):
        assert group in f, group
    assert f["kept/1/0"].shape[0] == 2, "one kept-gradient row per rank"
    a, b = f["stages/0/values"][:], f["replicas/1/stages/0/values"][:]
    assert (a != b).any(), "the two waves' replicas should differ after 10 steps"
PY

for ranks in 2 1; do
  cp -r "$dir/full" "$dir/re$ranks"
  rm "$dir/re$ranks"/checkpoints/step_0000002?.h5 "$dir/re$ranks"/checkpoints/step_00000030.h5
  mpiexec -n $ranks "$WAVETRAIN" "$deck" "${common[@]}" --steps 30 --run-dir "$dir/re$ranks" \
    --restart
  grep -q "resumed from .*step_00000010.h5 at step 10" "$dir/re$ranks/log.txt" ||
    fail "$ranks rank(s): did not resume from step 10"
  [[ $(losses "$dir/re$ranks" | wc -l) == 30 ]] || fail "$ranks rank(s): expected 30 loss rows"
done
diff <(losses "$dir/full") <(losses "$dir/re2") > /dev/null ||
  fail "2 ranks: losses after resuming from step 10 differ from the uninterrupted run"
echo "ok: ticktock resumed at step 10 on 2 ranks: 20 later losses bitwise identical"
read -r a b < <(paste -d' ' <(losses "$dir/full" | awk '$1==11 {print $2}') \
  <(losses "$dir/re1" | awk '$1==11 {print $2}'))
awk -v a="$a" -v b="$b" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 1e-6 * a) }' ||
  fail "1 rank: first resumed loss $b differs from the 2-rank run's $a"
echo "ok: the 2-rank ticktock checkpoint resumed on 1 rank: step 11 loss $b vs $a"

# A ticktock checkpoint is not a gang one: resuming it under gang is bad input (exit 2).
cp -r "$dir/full" "$dir/gang"
rc=0
mpiexec -n 2 "$WAVETRAIN" "$deck" "${common[@]}" --set 'schedule.kind="gang"' --steps 40 \
  --run-dir "$dir/gang" --restart 2> "$dir/gang.err" || rc=$?
[[ $rc == 2 ]] || fail "ticktock checkpoint under gang: exit $rc, expected 2"
grep -q "schedule.kind: the checkpoint holds 2 model replica(s) per rank (schedule 'ticktock'), the deck's schedule needs 1" \
  "$dir/gang.err" || fail "no clear replica-count message: $(cat "$dir/gang.err")"
echo "ok: a ticktock checkpoint under gang is refused with exit 2"

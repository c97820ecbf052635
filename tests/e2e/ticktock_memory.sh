#!/usr/bin/env bash
# End to end, issue 5 ticktock test 2: two waves fit in a memory budget in which the same two
# replicas run in lockstep (schedule.wave_offset = false: both forwards, then both backwards) do
# not. 2 ranks of the VGG deck with a large batch, so activations dominate. First one traced run
# of each measures its peak (the allocator's bytes in use, max over ranks, from trace.h5); then
# device.memory_limit is set halfway between the two peaks: ticktock must finish, the lockstep
# run must exit 3 with the out-of-memory message.
source "$(dirname "$0")/lib/common.bash"
/usr/bin/python3 -c "import h5py, numpy" 2>/dev/null ||
  fail "python3-h5py/python3-numpy are missing (tools/setup.sh installs them)"
data=$(fashion_mnist_h5)
steps=3
common=("$WT_SOURCE_DIR/inputs/fashion_vgg.toml" --set "data.path=\"$data\""
  --set 'schedule.kind="ticktock"' --set train.global_batch=256 --set train.eval_every_epoch=false
  --set checkpoint.every_steps=0 --steps "$steps")

peak() {  # trace.h5 -> the largest bytes-in-use sample of any rank
  /usr/bin/python3 -c 'import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    print(max(int(f[g]["memory"]["in_use"][:].max()) for g in f))' "$1"
}

for offset in true false; do
  mpiexec -n 2 "$WAVETRAIN" "${common[@]}" --set schedule.wave_offset=$offset \
    --set trace.enabled=true --set trace.start_step=0 --set trace.end_step=$steps \
    --run-dir "$dir/trace_$offset" > "$dir/trace_$offset.txt" 2>&1 ||
    fail "traced run (wave_offset = $offset) failed: $(cat "$dir/trace_$offset.txt")"
done
with=$(peak "$dir/trace_true/trace.h5")
without=$(peak "$dir/trace_false/trace.h5")
echo "peak bytes in use per rank: ticktock (offset) $with, lockstep (no offset) $without" \
  "($(awk -v a="$with" -v b="$without" 'BEGIN { printf "%.2f", a / b }') of lockstep)"
# The offset must save a clear share of the lockstep peak, not a rounding error.
(( with * 10 < without * 8 )) || fail "offset peak $with is not clearly below lockstep's $without"

budget=$(( (with + without) / 2 ))
echo "device.memory_limit = $budget"
mpiexec -n 2 "$WAVETRAIN" "${common[@]}" --set device.memory_limit=$budget \
  --run-dir "$dir/budget_true" > "$dir/budget_true.txt" 2>&1 ||
  fail "ticktock did not fit in $budget bytes: $(tail -5 "$dir/budget_true.txt")"
grep -q "done: $steps steps" "$dir/budget_true.txt" || fail "ticktock did not finish its steps"

rc=0
mpiexec -n 2 "$WAVETRAIN" "${common[@]}" --set device.memory_limit=$budget \
  --set schedule.wave_offset=false --run-dir "$dir/budget_false" > "$dir/budget_false.txt" 2>&1 ||
  rc=$?
[[ $rc == 3 ]] || fail "lockstep in $budget bytes: exit $rc, expected 3: $(tail -5 "$dir/budget_false.txt")"
# Exit 3 names what was being allocated: the instruction, its stream, the tensor and the bytes.
grep -E "(fwd|bwd|recv|send|bcast|step|load|keep)[^:]* on stream [0-9]+: (the .* of node '[a-z0-9_]+'|[a-z].*): out of device memory: requested [0-9]+ bytes with [0-9]+ in use of a $budget-byte limit \(device.memory_limit\)" \
  "$dir/budget_false.txt" || fail "no clear out-of-memory message: $(tail -5 "$dir/budget_false.txt")"
echo "ticktock fits in $budget bytes, lockstep exits 3"

#!/usr/bin/env bash
# End to end, issue 5 waves "Memory": a waves rank holds its own stage and the stages it computes
# on right now, not the whole model. 4 ranks, a 4-stage MLP whose parameters dominate (4 samples
# per batch, so activations are a few KB against ~1 MB per stage), plain SGD (no optimizer
# state), explicit cuts (no profiling run of the whole model).
#
# 1. Traced runs of waves and of gang on the same 4 ranks at the same per-rank batch (gang holds
#    the whole model on every rank, as every waves rank did before stages were borrowed: measured
#    1.10x gang's peak then). Every waves rank's peak bytes in use (trace.h5) must be clearly below
#    gang's. Holding every stage at the turn from forward to backward (the generator broadcasts
#    each stage once per step), a waves rank holds 6 of the 8 stage buffers (values, grads).
# 2. Out of memory for real: with device.memory_limit halfway between the two peaks, waves
#    finishes while gang exits 3 with the out-of-memory message.
# 3. Checkpoints when ranks hold only their own stages (AdamW: the optimizer state lives with the
#    owner only): 3 steps, --restart to 6, and every loss equals an uninterrupted 6-step run's,
#    to all 17 digits.
source "$(dirname "$0")/lib/common.bash"
/usr/bin/python3 -c "import h5py, numpy" 2>/dev/null ||
  fail "python3-h5py/python3-numpy are missing (tools/setup.sh installs them)"
data=$(fashion_mnist_h5)
steps=3
cat > "$dir/mlp_wide.toml" <<'TOML'
# 784-512-512-512-512-10: four stages of about 1 MB of parameters each with cuts [3, 5, 7].
[model]
name = "mlp_wide"
input = [1, 28, 28]
classes = 10
[[layer]]
name = "flatten"
type = "flatten"
[[layer]]
name = "fc1"
type = "linear"
out_features = 512
[[layer]]
name = "relu1"
type = "relu"
[[layer]]
name = "fc2"
type = "linear"
out_features = 512
[[layer]]
name = "relu2"
type = "relu"
[[layer]]
name = "fc3"
type = "linear"
out_features = 512
[[layer]]
name = "relu3"
type = "relu"
[[layer]]
name = "fc4"
type = "linear"
out_features = 512
[[layer]]
name = "relu4"
type = "relu"
[[layer]]
name = "fc5"
type = "linear"
out_features = 10
[[layer]]
name = "loss"
type = "softmax_xent"
TOML
common=("$WT_SOURCE_DIR/inputs/fashion_mlp.toml" --set "data.path=\"$data\""
  --set "model.file=\"$dir/mlp_wide.toml\"" --set optimizer.momentum=0
  --set train.eval_every_epoch=false --set checkpoint.every_steps=0 --steps "$steps")
waves=(--set 'schedule.kind="waves"' --set 'schedule.cuts=[3,5,7]' --set train.global_batch=4)
gang=(--set 'schedule.kind="gang"' --set train.global_batch=16)
trace=(--set trace.enabled=true --set trace.start_step=0 --set trace.end_step=$steps)
for kind in waves gang; do
  declare -n flags=$kind
  mpiexec -n 4 --oversubscribe "$WAVETRAIN" "${common[@]}" "${flags[@]}" "${trace[@]}" \
    --run-dir "$dir/trace_$kind" > "$dir/trace_$kind.txt" 2>&1 ||
    fail "traced $kind run failed: $(cat "$dir/trace_$kind.txt")"
done
peaks() {  # trace.h5 -> each rank's largest bytes-in-use sample
  /usr/bin/python3 -c 'import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    print(" ".join(str(int(f[g]["memory"]["in_use"][:].max())) for g in sorted(f)))' "$1"
}
waves_peaks=$(peaks "$dir/trace_waves/trace.h5")
gang_peak=$(peaks "$dir/trace_gang/trace.h5" | tr ' ' '\n' | sort -n | tail -1)
params=$(sed -n 's/.*model mlp_wide (\([0-9]*\) parameters).*/\1/p' "$dir/trace_waves.txt")
echo "peak bytes in use per rank, 4 ranks: waves $waves_peaks; gang $gang_peak" \
  "(whole-model values + gradients: $((8 * params)) bytes before allocator rounding)"
worst=0
for p in $waves_peaks; do
  echo "  waves rank peak / gang peak = $(awk -v a="$p" -v b="$gang_peak" 'BEGIN { printf "%.3f", a / b }')"
  (( p * 100 < gang_peak * 95 )) || fail "a waves rank's peak $p is not clearly below gang's $gang_peak"
  (( p > worst )) && worst=$p
done

budget=$(( (worst + gang_peak) / 2 ))
echo "device.memory_limit = $budget"
mpiexec -n 4 --oversubscribe "$WAVETRAIN" "${common[@]}" "${waves[@]}" \
  --set device.memory_limit=$budget --run-dir "$dir/budget_waves" > "$dir/budget_waves.txt" 2>&1 ||
  fail "waves did not fit in $budget bytes: $(tail -5 "$dir/budget_waves.txt")"
grep -q "done: $steps steps" "$dir/budget_waves.txt" || fail "waves did not finish its steps"

rc=0
mpiexec -n 4 --oversubscribe "$WAVETRAIN" "${common[@]}" "${gang[@]}" \
  --set device.memory_limit=$budget --run-dir "$dir/budget_gang" > "$dir/budget_gang.txt" 2>&1 ||
  rc=$?
[[ $rc == 3 ]] || fail "gang in $budget bytes: exit $rc, expected 3: $(tail -5 "$dir/budget_gang.txt")"
# Exit 3 names what was being allocated: the instruction, its stream, the tensor and the bytes.
grep -E "((fwd|bwd|recv|send|bcast|step|load|keep)[^:]* on stream [0-9]+: (the .* of node '[a-z0-9_]+'|[a-z].*)|cannot allocate the [a-z ]+ of the stage of nodes [0-9.]+ \([0-9]+ floats, [0-9]+ bytes\)): out of device memory: requested [0-9]+ bytes with [0-9]+ in use of a $budget-byte limit \(device.memory_limit\)" \
  "$dir/budget_gang.txt" > /dev/null || fail "no clear out-of-memory message: $(tail -5 "$dir/budget_gang.txt")"
echo "waves fits in $budget bytes on 4 ranks, gang (whole model per rank) exits 3"

ckpt=("$WT_SOURCE_DIR/inputs/fashion_mlp.toml" --quiet --set "data.path=\"$data\""
  --set "model.file=\"$dir/mlp_wide.toml\"" --set 'optimizer.kind="adamw"' --set optimizer.lr=0.001
  --set train.eval_every_epoch=false --set train.log_every_steps=1 "${waves[@]}")
mpiexec -n 4 --oversubscribe "$WAVETRAIN" "${ckpt[@]}" --steps 6 --run-dir "$dir/full" ||
  fail "uninterrupted waves run failed"
mpiexec -n 4 --oversubscribe "$WAVETRAIN" "${ckpt[@]}" --steps 3 --run-dir "$dir/cut" ||
  fail "first half failed"
mpiexec -n 4 --oversubscribe "$WAVETRAIN" "${ckpt[@]}" --steps 6 --restart --run-dir "$dir/cut" ||
  fail "resumed half failed"
losses() { awk -F, '$1=="train" { print $2, $4 }' "$1/metrics.csv"; }
[[ $(losses "$dir/full" | wc -l) == 6 ]] || fail "expected 6 loss rows: $(losses "$dir/full")"
diff <(losses "$dir/full") <(losses "$dir/cut") ||
  fail "the resumed waves run's losses differ from the uninterrupted run's"
echo "waves on 4 ranks resumes from its checkpoint with bitwise identical losses"

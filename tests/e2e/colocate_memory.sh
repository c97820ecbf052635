#!/usr/bin/env bash
# Waterwave co-location's memory, end to end (issue 34): two lenet jobs on one device. Traced runs
# measure the peak bytes in use (trace.h5) of the jobs in paired rounds (node groups paired by
# bytes) and of unordered sharing (their instructions in turn, no groups). With
# device.memory_limit halfway between the two, the paired rounds finish, with a peak that
# --simulate (the round's memory rules, from each job's profiled step) predicted within 5%, and
# unordered sharing exits 3 with the out-of-memory message.
source "$(dirname "$0")/lib/common.bash"
python=${WT_PYTHON:-/usr/bin/python3}
"$python" -c "import h5py, numpy" 2>/dev/null ||
  fail "python3-h5py/python3-numpy are missing (tools/setup.sh installs them)"
data=$(fashion_mnist_h5)
steps=4  # two steps alone (warm-up, profile), then rounds: traced from step 2

for job in a b; do
  cat >"$dir/$job.toml" <<DECK
[run]
name = "$job"
[data]
path = "$data"
preload = false
[model]
file = "$WT_SOURCE_DIR/models/lenet.toml"
[optimizer]
kind = "sgd"
lr = 0.01
[train]
global_batch = 256
eval_every_epoch = false
[checkpoint]
every_steps = 0
[trace]
enabled = true
start_step = 2
end_step = $steps
DECK
done
pair() {  # deck file, sharing, budget
  printf '[run]\nname = "pair"\n[colocate]\ndecks = ["a.toml", "b.toml"]\nsharing = "%s"\n[device]\nmemory_limit = %s\n' \
    "$2" "$3" >"$1"
}
peak() {  # trace.h5 -> the largest bytes-in-use sample (the device's, every job's bytes)
  "$python" -c 'import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    print(max(int(f[g]["memory"]["in_use"][:].max()) for g in f))' "$1"
}

for sharing in nodegroups unordered; do
  pair "$dir/$sharing.toml" "$sharing" 0
  "$WAVETRAIN" "$dir/$sharing.toml" --steps $steps --run-dir "$dir/$sharing" >"$dir/$sharing.txt" 2>&1 ||
    fail "$sharing without a budget failed: $(tail -5 "$dir/$sharing.txt")"
done
paired=$(peak "$dir/nodegroups/a/trace.h5")
unordered=$(peak "$dir/unordered/a/trace.h5")
echo "peak bytes in use: paired rounds $paired, unordered sharing $unordered" \
  "($(awk -v a="$paired" -v b="$unordered" 'BEGIN { printf "%.2f", a / b }') of unordered)"
((paired * 10 < unordered * 8)) || fail "the paired rounds' peak $paired is not clearly below unordered sharing's $unordered"

budget=$(((paired + unordered) / 2))
echo "device.memory_limit = $budget"
pair "$dir/budget.toml" nodegroups "$budget"
"$WAVETRAIN" "$dir/budget.toml" --steps $steps --run-dir "$dir/budget" >"$dir/budget.txt" 2>&1 ||
  fail "the paired rounds did not fit in $budget bytes: $(tail -5 "$dir/budget.txt")"
grep -q "^\[b\] wavetrain: done: $steps steps" "$dir/budget.txt" || fail "the paired rounds did not finish"
measured=$(peak "$dir/budget/a/trace.h5")
((measured <= budget)) || fail "peak $measured over the budget $budget"
grep -o "co-location: .*" "$dir/budget/a/log.txt" | head -1

"$WAVETRAIN" "$dir/budget.toml" --simulate --device a100 >"$dir/simulate.txt" 2>&1 ||
  fail "--simulate failed: $(cat "$dir/simulate.txt")"
cat "$dir/simulate.txt"
predicted=$(sed -n 's/.*peak memory per rank (the round.s rules): \([0-9]*\) bytes.*/\1/p' "$dir/simulate.txt")
[[ -n $predicted ]] || fail "--simulate printed no predicted peak"
echo "measured peak $measured, --simulate's $predicted"
awk -v m="$measured" -v p="$predicted" 'BEGIN { d = m - p; if (d < 0) d = -d; exit !(d <= 0.05 * m) }' ||
  fail "--simulate's peak $predicted is not within 5% of the measured $measured"

rc=0
pair "$dir/unordered_budget.toml" unordered "$budget"
"$WAVETRAIN" "$dir/unordered_budget.toml" --steps $steps --run-dir "$dir/unordered_budget" \
  >"$dir/unordered_budget.txt" 2>&1 || rc=$?
[[ $rc == 3 ]] || fail "unordered sharing in $budget bytes: exit $rc, expected 3: $(tail -5 "$dir/unordered_budget.txt")"
grep -E "out of device memory: requested [0-9]+ bytes with [0-9]+ in use of a $budget-byte limit \(device.memory_limit\)" \
  "$dir/unordered_budget.txt" || fail "no clear out-of-memory message: $(tail -5 "$dir/unordered_budget.txt")"
echo "paired rounds fit in $budget bytes, unordered sharing exits 3"

# Pairs leave one node's allocation free under the budget: two mlp jobs at batch 8192 under the
# budget one alone reserves at that batch (115343360 bytes) finish. Filling the budget to the byte
# (the predicted 112.7 MB) they failed in fc1's backward with 83 MB in use: the cache's split
# blocks could not all be returned.
for job in ma mb; do
  sed -e "s/^name = .*/name = \"$job\"/" -e 's/lenet.toml/mlp.toml/' -e 's/global_batch = 256/global_batch = 8192/' \
    -e '/^\[trace\]/,$d' "$dir/a.toml" >"$dir/$job.toml"
done
printf '[run]\nname = "mlp_pair"\n[colocate]\ndecks = ["ma.toml", "mb.toml"]\n[device]\nmemory_limit = 115343360\n' >"$dir/mlp_pair.toml"
"$WAVETRAIN" "$dir/mlp_pair.toml" --steps $steps --run-dir "$dir/mlp_pair" >"$dir/mlp_pair.txt" 2>&1 ||
  fail "two mlp jobs at batch 8192 did not fit in 115343360 bytes: $(tail -3 "$dir/mlp_pair.txt")"
echo "two mlp jobs at batch 8192 fit in 115343360 bytes"

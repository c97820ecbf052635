#!/usr/bin/env bash
# Bad input that only shows against the data, the ranks or the memory is found before training
# (issue 10 §4): each case exits 2 (or 3 for memory) within seconds, with one message naming the
# file or key, on 1 and on 2 ranks (a check on one rank still ends every rank: no hang).
source "$(dirname "$0")/lib/common.bash"
data=$(fashion_mnist_h5)
python=${WT_PYTHON:-/usr/bin/python3}
deck="$WT_SOURCE_DIR/inputs/fashion_mlp.toml"

expect() {  # name status pattern ranks args...
  local name=$1 status=$2 pattern=$3 ranks=$4; shift 4
  local start=$SECONDS rc=0
  timeout 120 mpiexec -n "$ranks" "$WAVETRAIN" "$deck" --run-dir "$dir/run_$name" --steps 3 "$@" \
    >"$dir/$name.out" 2>"$dir/$name.err" || rc=$?
  local took=$((SECONDS - start))
  [[ $rc == "$status" ]] || { cat "$dir/$name.err"; fail "$name: exit status $rc, expected $status"; }
  ((took <= 30)) || fail "$name: took $took s"
  [[ $(grep -c "^wavetrain: " "$dir/$name.err") == 1 ]] || { cat "$dir/$name.err"; fail "$name: expected one message"; }
  grep -q -- "$pattern" "$dir/$name.err" || { cat "$dir/$name.err"; fail "$name: message lacks '$pattern'"; }
  if grep -qE "internal error|terminate called|Segmentation|bad_alloc" "$dir/$name.err"; then fail "$name: crashed"; fi
  echo "ok $name ($ranks rank(s)): status $rc after $took s: $(grep '^wavetrain: ' "$dir/$name.err")"
}
dataset() {  # kind -> path
  "$python" "$WT_SOURCE_DIR/tests/e2e/lib/make_dataset.py" "$data" "$dir/$1.h5" "$1"
  echo "$dir/$1.h5"
}
with_data() { echo "data.path=\"$1\""; }

for ranks in 1 2; do
  expect batch_over_split_$ranks 2 "train.global_batch: 100000 is larger than the training split's 60000" \
    $ranks --set "$(with_data "$data")" --set train.global_batch=100000
  expect huge_epochs_$ranks 2 "train.epochs: .* more steps than can be counted" \
    $ranks --set "$(with_data "$data")" --set train.epochs=4000000000000000000
  expect cut_past_end_$ranks 2 "schedule.cuts: cut 100 is out of range: model 'mlp' has 7 nodes" \
    $ranks --set "$(with_data "$data")" --set schedule.kind=\"pipeline\" --set schedule.cuts=[100]
done
# Fewer samples than ranks: the second rank's part would be empty (this hung before).
expect batch_under_ranks 2 "train.global_batch: 1 samples cannot be cut into the 2 parts" \
  2 --set "$(with_data "$data")" --set train.global_batch=1
expect microbatches 2 "schedule.kind: 'pipeline': microbatches must be between 1 and the global batch (2)" \
  2 --set "$(with_data "$data")" --set train.global_batch=2 --set schedule.kind=\"pipeline\" \
  --set schedule.microbatches=4 --set schedule.cuts=[2]
expect empty_train 2 "the training split has no samples" 2 --set "$(with_data "$(dataset empty_train)")"
expect classes 2 "model.classes: the model has 10 classes, the dataset .* has 5" \
  2 --set "$(with_data "$(dataset classes5)")"
expect declared_huge 2 "/train/inputs: declares 78400000000 bytes of data (100000000 samples), but the file holds only" \
  2 --set "$(with_data "$(dataset declared_huge)")"

# An empty test split is no error: a warning, training, and no evaluation.
rc=0
mpiexec -n 2 "$WAVETRAIN" "$deck" --set "$(with_data "$(dataset empty_test)")" --steps 40 \
  --set train.global_batch=64 --run-dir "$dir/empty_test" >"$dir/empty_test.out" 2>&1 || rc=$?
cat "$dir/empty_test.out"
[[ $rc == 0 ]] || fail "empty test split: exit status $rc"
grep -q "wavetrain: warning: .*the test split /test has no samples" "$dir/empty_test.out" || fail "no warning"
grep -q "no test evaluation (the test split /test is empty)" "$dir/empty_test.out" || fail "done line"
if grep -q "test accuracy" "$dir/empty_test.out"; then fail "an evaluation of no samples was reported"; fi

# Too large for host memory: a linear layer of 2^33 floats (32 GiB) under a 4 GiB address-space
# limit, with and without a device.memory_limit: exit 3 naming the stage tensor and its bytes.
sed 's/out_features = 256/out_features = 10000000/' "$WT_SOURCE_DIR/models/mlp.toml" | head -15 >"$dir/huge.toml"
cat >>"$dir/huge.toml" <<'MODEL'

[[layer]]
name = "fc3"
type = "linear"
out_features = 10

[[layer]]
name = "loss"
type = "softmax_xent"
MODEL
(ulimit -v 4000000; expect huge_model 3 "cannot allocate the parameter values of the stage of nodes 0\.\.[0-9]* (7950000010 floats, 31800000040 bytes)" \
  1 --set "$(with_data "$data")" --set "model.file=\"$dir/huge.toml\"")
expect huge_model_budget 3 "cannot allocate the parameter values of the stage of nodes 0\.\.[0-9]* (7950000010 floats, 31800000040 bytes): out of device memory" \
  1 --set "$(with_data "$data")" --set "model.file=\"$dir/huge.toml\"" --set device.memory_limit=1000000000

#!/usr/bin/env bash
# End to end: ranks that read different copies of the dataset (issue 17 §4), as when one node's
# local copy is stale. An MPMD launch gives rank 0 and rank 1 each its own data.path. Before the
# digest check this deadlocked at the shorter copy's epoch boundary; now every rank must end with
# status 2 within seconds, before any step, with one message naming both ranks, their hosts and
# their files and what differs. Two cases: a copy one training sample short, and a copy with the
# same counts and shapes but other rows. And the control: two identical copies at different paths
# train normally (the check compares the data, not the names).
source "$(dirname "$0")/lib/common.bash"
source "$(dirname "$0")/lib/processes.bash"
trap 'kill_matching "$dir/run"; rm -rf "$dir"' EXIT
python=${WT_PYTHON:-/usr/bin/python3}
data=$(fashion_mnist_h5)
for kind in small fewer_train other_rows; do
  "$python" "$WT_SOURCE_DIR/tests/e2e/lib/make_dataset.py" "$data" "$dir/$kind.h5" "$kind"
done
mkdir "$dir/node_a" "$dir/node_b"
cp "$dir/small.h5" "$dir/node_a/d.h5"
cp "$dir/small.h5" "$dir/node_b/d.h5"
host=$(hostname)

# Runs rank 0 on $1 and rank 1 on $2 (a step count no run finishes before the check), bounded.
run_pair() {  # file0 file1 run_name
  local common=("$WAVETRAIN" "$WT_SOURCE_DIR/inputs/fashion_mlp.toml" --set checkpoint.every_steps=1
                --steps "${STEPS:-100000000}" --run-dir "$dir/run_$3")
  set +e
  timeout 120 mpiexec -n 1 "${common[@]}" --set "data.path=\"$1\"" \
    : -n 1 "${common[@]}" --set "data.path=\"$2\"" >"$dir/$3.txt" 2>&1
  rc=$?
  set -e
}

check_refused() {  # case file1 what_differs
  local start=$SECONDS
  run_pair "$dir/small.h5" "$dir/$2" "$1"
  local took=$((SECONDS - start))
  echo "case $1: exit $rc after $took s"
  grep "wavetrain: error" "$dir/$1.txt" || true
  [[ $rc == 2 ]] || { cat "$dir/$1.txt"; fail "$1: exit status $rc, expected 2"; }
  ((took < 60)) || fail "$1: took $took s"
  local line
  line=$(grep "the ranks read different copies of the dataset" "$dir/$1.txt") ||
    fail "$1: no message about different copies"
  [[ $(grep -c "the ranks read different copies" "$dir/$1.txt") == 1 ]] ||
    fail "$1: the message is printed more than once"
  for want in "$dir/$2: " "rank 1 (host $host) reads this file" \
    "rank 0 (host $host) reads $dir/small.h5" "$3" "Ranks whose copy differs from rank 0's: 1 (1 of 2 ranks)"; do
    [[ $line == *"$want"* ]] || fail "$1: the message lacks '$want': $line"
  done
  grep -q "^step \|checkpoint step_" "$dir/$1.txt" && fail "$1: training started"
  [[ -z $(ls "$dir/run_$1/checkpoints" 2>/dev/null) ]] || fail "$1: checkpoints were written"
}

check_refused fewer "fewer_train.h5" "they differ: train samples 2047 vs 2048"
check_refused rows "other_rows.h5" "they differ: rows checksum"

# Control: the same data under two names trains (a few steps, a checkpoint after each). The names
# differ in length, so the ranks' decks do too: the checkpoint records rank 0's deck (a parallel
# file's dataset shapes must agree on every rank; per-rank lengths once hung the first write).
mkdir "$dir/node_b_longer_name"
cp "$dir/small.h5" "$dir/node_b_longer_name/d.h5"
STEPS=3 run_pair "$dir/node_a/d.h5" "$dir/node_b_longer_name/d.h5" same
[[ $rc == 0 ]] || { cat "$dir/same.txt"; fail "identical copies at two paths: exit $rc, expected 0"; }
grep -q "different copies" "$dir/same.txt" && fail "identical copies were called different"
[[ -f "$dir/run_same/checkpoints/step_00000003.h5" ]] || fail "identical copies: no checkpoint at step 3"
echo "case same data at two paths: exit 0"
echo "PASS"

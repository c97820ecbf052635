#!/usr/bin/env bash
# End to end: the dataset changes under a running job (issue 17 §2). The reader maps the file;
# before the fix a truncation killed every rank with SIGBUS, without naming the file. Two ranks
# train on a private copy of Fashion-MNIST with a step count they cannot finish, checkpointing
# every 10 steps; once a checkpoint is written (the sign the run is under way, no guessed sleep),
# the copy is (1) truncated, (2) rewritten in place with other data, as `cp` or a converter run
# again does. Each time the job must end with status 2 within 60 s, with one message naming the
# file and saying it changed while the job ran, and no bus error; the last checkpoint must be
# intact: a --restart on a good copy resumes from it and trains on.
source "$(dirname "$0")/lib/common.bash"
source "$(dirname "$0")/lib/processes.bash"
trap 'kill_matching "$dir/run"; rm -rf "$dir"' EXIT
python=${WT_PYTHON:-/usr/bin/python3}
good=$(fashion_mnist_h5)
"$python" "$WT_SOURCE_DIR/tests/e2e/lib/make_dataset.py" "$good" "$dir/other.h5" small

# Waits (up to $2 s) until run directory $1 has a checkpoint.
wait_checkpoint() {  # run_dir timeout
  local i
  for ((i = 0; i < $2 * 10; ++i)); do
    [[ -f "$1/checkpoints/latest" ]] && return 0
    sleep 0.1
  done
  fail "no checkpoint in $1 within $2 s"
}

check_case() {  # name change_command...
  local name=$1 run="$dir/run_$1"
  shift
  cp "$good" "$dir/data.h5"
  mpiexec -n 2 "$WAVETRAIN" "$WT_SOURCE_DIR/inputs/fashion_mlp.toml" \
    --set "data.path=\"$dir/data.h5\"" --set checkpoint.every_steps=10 --set checkpoint.keep=3 \
    --steps 100000000 --run-dir "$run" >"$dir/$name.txt" 2>&1 &
  local job=$!
  wait_checkpoint "$run" 120
  "$@"  # the change
  local start=$SECONDS
  wait_gone "$job" 60 || fail "$name: the job did not end within 60 s of the change"
  set +e
  wait "$job"
  local rc=$?
  set -e
  echo "case $name: exit $rc after $((SECONDS - start)) s"
  grep "wavetrain: error" "$dir/$name.txt" || true
  [[ $rc == 2 ]] || { tail -20 "$dir/$name.txt"; fail "$name: exit status $rc, expected 2"; }
  grep -Eq "^wavetrain: error: $dir/data.h5: /(train|test)/inputs: the dataset file changed while the job ran \(size 55692240 -> [0-9]+ bytes" \
    "$dir/$name.txt" || fail "$name: no message naming the file and saying it changed"
  grep -iq "bus error\|signal 7\|SIGBUS" "$dir/$name.txt" && fail "$name: a bus error was reported"

  # The last checkpoint is intact: resume from it on a good copy and take 3 more steps.
  local last step
  last=$(cat "$run/checkpoints/latest")
  [[ -f "$run/checkpoints/$last" ]] || fail "$name: latest names $last, which is missing"
  step=$((10#$(sed 's/step_0*\([0-9]*\)\.h5/\1/' <<<"$last")))
  set +e
  timeout 120 mpiexec -n 2 "$WAVETRAIN" "$WT_SOURCE_DIR/inputs/fashion_mlp.toml" \
    --set "data.path=\"$good\"" --set checkpoint.every_steps=10 --steps $((step + 3)) --restart \
    --run-dir "$run" >"$dir/$name.resume.txt" 2>&1
  rc=$?
  set -e
  [[ $rc == 0 ]] || { cat "$dir/$name.resume.txt"; fail "$name: resume exit status $rc"; }
  grep -q "resumed from .*$last at step $step" "$dir/$name.resume.txt" ||
    { cat "$dir/$name.resume.txt"; fail "$name: did not resume from $last"; }
  grep -q "done: $((step + 3)) steps" "$dir/$name.resume.txt" || { cat "$dir/$name.resume.txt"; fail "$name: the resumed run did not train"; }
  echo "case $name: resumed from $last"
}

check_case truncated truncate -s 1M "$dir/data.h5"
check_case rewritten cp "$dir/other.h5" "$dir/data.h5"
echo "PASS"

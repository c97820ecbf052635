#!/usr/bin/env bash
# Co-located jobs stopped and resumed (issue 34): two jobs (lenet and mlp) train in paired rounds
# until SIGINT arrives while a round's node groups run; the round in hand ends (every job at the
# same step, the last group's boundary), each job writes its checkpoint and the run exits 75. The
# resumed run profiles each job again from its own checkpoint and goes back to paired rounds; each
# job's weights at the end are bitwise those of an uninterrupted co-located run.
source "$(dirname "$0")/lib/common.bash"
python=${WT_PYTHON:-/usr/bin/python3}
"$python" -c "import h5py, numpy" 2>/dev/null ||
  fail "python3-h5py/python3-numpy are missing (tools/setup.sh installs them)"
data=$(fashion_mnist_h5)
cd "$dir"

job_deck() {  # file, run name, model, lr
  cat >"$1" <<DECK
[run]
name = "$2"
[data]
path = "$data"
preload = false
[model]
file = "$WT_SOURCE_DIR/models/$3"
[optimizer]
kind = "sgd"
lr = $4
[train]
global_batch = 64
eval_every_epoch = false
log_every_steps = 1
[checkpoint]
every_steps = 5
DECK
}
job_deck lenet.toml lenet lenet.toml 0.01
job_deck mlp.toml mlp mlp.toml 0.05
printf '[run]\nname = "pair"\n[colocate]\ndecks = ["lenet.toml", "mlp.toml"]\n' >pair.toml

"$WAVETRAIN" pair.toml --steps 1000000 --run-dir stopped >stopped.txt 2>&1 &
job=$!
deadline=$((SECONDS + 60))
# Rounds begin at step 2 (steps 0 and 1 run alone: warm-up, profile): stop once step 4 is logged.
until grep -q '^train,[4-9]' stopped/lenet/metrics.csv 2>/dev/null; do
  kill -0 "$job" 2>/dev/null || { cat stopped.txt; fail "the run ended before its rounds"; }
  ((SECONDS < deadline)) || { cat stopped.txt; kill "$job"; fail "no round in 60 s"; }
  sleep 0.1
done
kill -INT "$job"
status=0
wait "$job" || status=$?
tail -4 stopped.txt
[[ $status == 75 ]] || fail "SIGINT during the rounds: exit $status, expected 75"
grep -q "paired by bytes" stopped/lenet/log.txt || fail "the run never reached its paired rounds"
step=""
for j in lenet mlp; do
  latest=$(cat "stopped/$j/checkpoints/latest")
  s=$(sed 's/^step_0*\([0-9]*\)\.h5$/\1/' <<<"$latest")
  [[ -z $step || $s == "$step" ]] || fail "the jobs stopped at different steps: $step and $s"
  step=$s
done
((step >= 4)) || fail "stopped at step $step, before the rounds"
end=$((step + 6))
echo "both jobs stopped at step $step; resuming to $end"

"$WAVETRAIN" pair.toml --steps $end --restart --run-dir stopped >resumed.txt 2>&1 ||
  fail "the resumed run failed: $(tail -5 resumed.txt)"
for j in lenet mlp; do
  grep -q "^\[$j\] wavetrain: resumed from .*step_0*$step.h5 at step $step" resumed.txt ||
    fail "$j did not resume from its step-$step checkpoint: $(cat resumed.txt)"
done
grep -q "paired by bytes" <(tail -8 stopped/lenet/log.txt) || fail "the resumed run has no paired rounds"
"$WAVETRAIN" pair.toml --steps $end --run-dir whole >whole.txt 2>&1 ||
  fail "the uninterrupted run failed: $(tail -5 whole.txt)"
"$python" - "$end" <<'PY' || fail "a resumed job's weights differ from the uninterrupted run's"
import sys, h5py
step = f"checkpoints/step_{int(sys.argv[1]):08d}.h5"
for job in ("lenet", "mlp"):
    a = h5py.File(f"stopped/{job}/{step}", "r")["stages/0/values"][:]
    b = h5py.File(f"whole/{job}/{step}", "r")["stages/0/values"][:]
    same = a.tobytes() == b.tobytes()
    print(job, a.size, "parameters after the resume:", "bitwise equal" if same else "DIFFER")
    if not same:
        sys.exit(1)
PY

#!/usr/bin/env bash
# DeepPool multiplexing (issue 21), proofs 1, 2 and 5: a local background job trained in the
# idle time of a 2-rank foreground job
#   - leaves the foreground bitwise unchanged (losses and final weights) under gang, pipeline with
#     one microbatch and burst;
#   - after K steps is bitwise the same deck trained alone for K steps (on each rank);
#   - memory: foreground plus background within device.memory_limit; a background sub-budget too
#     small for its steps drops them (three in a row stop it), one too small for its weights
#     leaves it out; neither ever fails the foreground, whose weights stay bitwise the same.
source "$(dirname "$0")/lib/common.bash"
data=$(fashion_mnist_h5)
python=${WT_PYTHON:-/usr/bin/python3}
steps=20

source "$(dirname "$0")/lib/background_deck.bash"
write_background_deck "$dir/bg.toml"
fg_deck() {  # file, run name, [schedule] lines, extra sections
  cat >"$1" <<DECK
[run]
name = "$2"
output_dir = "$dir/runs"
[data]
path = "$data"
[model]
file = "$WT_SOURCE_DIR/models/lenet.toml"
[optimizer]
kind = "sgd"
lr = 0.01
[schedule]
$3
[train]
global_batch = 32
eval_every_epoch = false
${4:-}
DECK
}
# DeepPool's own multiplexing (its unsplit batch is bitwise its deck alone; the default
# foreground_first policy's micro-batches are proved in background_foreground_first.sh).
with_bg=$'[background]\ndeck = "bg.toml"\nwarmup_steps = 2\npolicy = "deeppool"'
# Every pipeline run cuts lenet by FLOPs: a cut balanced by profiled time is measured in each run
# directory, and under load two runs measured different cuts (weights of other shapes).
pipeline=$'kind = "pipeline"\nmicrobatches = 1\nbalance = "flops"'
burst='kind = "burst"
[burst]
ranks = [2,2,2,2,2,2,2,1,1,1,1]'
same() {  # a b what
  "$python" "$WT_SOURCE_DIR/tests/e2e/lib/same_weights.py" "$1" "$2" >/dev/null ||
    fail "$3: weights differ"
  cmp -s <(cut -d, -f1-5 "$(dirname "$(dirname "$1")")/metrics.csv") \
    <(cut -d, -f1-5 "$(dirname "$(dirname "$2")")/metrics.csv") || fail "$3: losses differ"
}
ckpt() { printf '%s/checkpoints/step_%08d.h5' "$1" "$2"; }

for schedule in gang pipeline burst; do
  case $schedule in
    gang) lines='kind = "gang"' ;;
    pipeline) lines=$pipeline ;;
    burst) lines=$burst ;;
  esac
  fg_deck "$dir/$schedule.toml" "$schedule" "$lines"
  fg_deck "$dir/${schedule}_bg.toml" "${schedule}_bg" "$lines" "$with_bg"
  mpirun -np 2 "$WAVETRAIN" "$dir/$schedule.toml" --steps $steps --quiet >"$dir/$schedule.out" 2>&1 ||
    { cat "$dir/$schedule.out"; fail "$schedule alone failed"; }
  mpirun -np 2 "$WAVETRAIN" "$dir/${schedule}_bg.toml" --steps $steps >"$dir/${schedule}_bg.out" 2>&1 ||
    { cat "$dir/${schedule}_bg.out"; fail "$schedule with a background job failed"; }
  same "$(ckpt "$dir/runs/$schedule" $steps)" "$(ckpt "$dir/runs/${schedule}_bg" $steps)" \
    "$schedule: the foreground with a background job"
  grep "^background:" "$dir/runs/${schedule}_bg/log.txt" || fail "$schedule: no background summary"
  echo "ok $schedule: the foreground is bitwise the same with a background job"
done

# Proof 2: each rank's background job after the K steps it reached (at least its 2 profiling
# steps; gang, the null case, and burst leave little idle time, pipeline enough to finish the
# deck's 6) against the deck trained alone, checkpointed every step.
"$WAVETRAIN" "$dir/bg.toml" --quiet >/dev/null || fail "the background deck alone failed"
for schedule in gang pipeline burst; do
  for r in 0 1; do
    run="$dir/runs/${schedule}_bg/background/rank_$r"
    k=$(sed -n 's/.*done: \([0-9]*\) steps.*/\1/p' "$run/log.txt")
    [[ -n $k ]] || { cat "$run/log.txt"; fail "$schedule rank $r: the background did not finish"; }
    [[ $schedule != pipeline || $k == 6 ]] || fail "$schedule rank $r: the background reached $k of 6 steps"
    "$python" "$WT_SOURCE_DIR/tests/e2e/lib/same_weights.py" "$(ckpt "$run" "$k")" \
      "$(ckpt "$dir/alone/bg" "$k")" >/dev/null || fail "$schedule rank $r: the background job's weights differ"
    echo "ok $schedule rank $r: the background job after $k steps is bitwise its deck alone"
  done
done

# The strict device (a GPU host's rules: lazy, shuffled streams; its host never waits, so the
# background runs only its profiling steps there): the foreground and each background bitwise
# as on the host.
mpirun -np 2 "$WAVETRAIN" "$dir/pipeline_bg.toml" --steps $steps --quiet --run-dir "$dir/runs/strict" \
  --set device.kind=strict >"$dir/strict.out" 2>&1 || { cat "$dir/strict.out"; fail "strict failed"; }
same "$(ckpt "$dir/runs/pipeline" $steps)" "$(ckpt "$dir/runs/strict" $steps)" "strict: the foreground"
for r in 0 1; do
  run="$dir/runs/strict/background/rank_$r"
  k=$(sed -n 's/.*done: \([0-9]*\) steps.*/\1/p' "$run/log.txt")
  "$python" "$WT_SOURCE_DIR/tests/e2e/lib/same_weights.py" "$(ckpt "$run" "$k")" \
    "$(ckpt "$dir/alone/bg" "$k")" >/dev/null || fail "strict rank $r: the background job's weights differ"
done
echo "ok strict device: the foreground and each rank's background bitwise as on the host"

# A resumed foreground resumes its background from the background's newest checkpoint.
mpirun -np 2 "$WAVETRAIN" "$dir/pipeline_bg.toml" --steps 20 --restart >"$dir/resumed.out" 2>&1 ||
  { cat "$dir/resumed.out"; fail "the resumed run failed"; }
for r in 0 1; do
  grep -q "resumed from .*background/rank_$r/checkpoints/step_00000006.h5 at step 6" \
    "$dir/runs/pipeline_bg/background/rank_$r/log.txt" || fail "rank $r: the background did not resume"
done
echo "ok a resumed foreground resumes each rank's background from its checkpoint"

# Proof 5: memory. The background's weights, momentum and batch-8 step fit in 20 MB; batch 2048
# does not; 1 MB holds not even its weights.
budget=$'[device]\nmemory_limit = 40000000'
memory_case() {  # name, background memory_limit, background batch, expected log line
  sed "s/global_batch = 8/global_batch = $3/; s/max_steps = 6/max_steps = 40/" "$dir/bg.toml" >"$dir/bg_$1.toml"
  fg_deck "$dir/$1.toml" "$1" "$pipeline" \
    "$(printf '[background]\ndeck = "bg_%s.toml"\nwarmup_steps = 2\npolicy = "deeppool"\nmemory_limit = %s\n%s' "$1" "$2" "$budget")"
  mpirun -np 2 "$WAVETRAIN" "$dir/$1.toml" --steps $steps >"$dir/$1.out" 2>&1 ||
    { cat "$dir/$1.out"; fail "$1: the foreground failed"; }
  same "$(ckpt "$dir/runs/pipeline" $steps)" "$(ckpt "$dir/runs/$1" $steps)" "$1: the foreground"
  grep -q -- "$4" "$dir/$1.out" || { cat "$dir/$1.out"; fail "$1: no '$4'"; }
  echo "ok $1: $(grep -m1 -- "$4" "$dir/$1.out")"
}
memory_case fits 20000000 8 "^background: .* steps (0 dropped)"
"$python" - "$dir/fits.out" <<'PY' || fail "fits: foreground plus background above the budget"
import re, sys
line = next(l for l in open(sys.argv[1]) if l.startswith("background:"))
peak, budget = map(float, re.search(r"peak ([0-9.]+) MB of budget ([0-9.]+) MB", line).groups())
bg = float(re.search(r"background ([0-9.]+) MB\)", line).group(1))
print(f"peak {peak} MB (background {bg} MB) of budget {budget} MB")
sys.exit(0 if peak <= budget and bg <= 20.0 else 1)
PY
memory_case steps_too_big 20000000 2048 "background job stopped: 3 steps in a row did not fit its memory"
memory_case weights_too_big 1000000 8 "background job not started: "

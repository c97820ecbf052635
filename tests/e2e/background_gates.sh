#!/usr/bin/env bash
# DeepPool multiplexing (issue 21), proofs 3 and 4, read off the runs' traces and tasklet logs by
# analysis/background.py, and the bad input:
#   - priority: under pipeline (one microbatch) no background tasklet begins while a foreground
#     stream can issue, and multi-node tasklets keep to tasklet_ms as planned; with
#     priority = false they do begin then;
#   - pipeline: no tasklet overlaps a foreground send in flight (block_during_send); with
#     block_during_send = false some do (sends through MPI: the shared window's end at once);
#   - ticktock (allreduces in flight while the rank waits): no tasklet overlaps a foreground
#     AllReduce (the gate holds, and says so); with block_during_allreduce = false they do, and
#     with priority = false both happen;
#   - feedback: a test hook makes one foreground wait 200x its solo time in steps 8-9; background work
#     is held during it from then on, and readmitted once its average relaxes;
#   - bad [background] input exits 2 naming the file, line and key;
#   - analysis/background.py's time shares add up to the traced steps' wall time.
source "$(dirname "$0")/lib/common.bash"
data=$(fashion_mnist_h5)
python=${WT_PYTHON:-/usr/bin/python3}

cat >"$dir/bg.toml" <<DECK
[run]
name = "bg"
[data]
path = "$data"
preload = false
[model]
file = "$WT_SOURCE_DIR/models/lenet.toml"
[train]
global_batch = 8
eval_every_epoch = false
DECK
fg_deck() {  # file, name, schedule lines, background lines
  cat >"$1" <<DECK
[run]
name = "$2"
output_dir = "$dir/runs"
[data]
path = "$data"
[model]
file = "$WT_SOURCE_DIR/models/lenet.toml"
[schedule]
$3
[train]
global_batch = 32
eval_every_epoch = false
[trace]
enabled = true
start_step = 4
end_step = 14
[background]
deck = "bg.toml"
warmup_steps = 2
policy = "deeppool"  # the paper's gates, each on its own
$4
DECK
}
report() {  # run name, schedule lines, background lines -> prints the JSON report
  fg_deck "$dir/$1.toml" "$1" "$2" "${3:-}"
  mpirun -np 2 "$WAVETRAIN" "$dir/$1.toml" --steps 16 --quiet >"$dir/$1.out" 2>&1 ||
    { cat "$dir/$1.out"; fail "$1 failed"; }
  "$python" "$WT_SOURCE_DIR/analysis/background.py" "$dir/runs/$1" >&2
  "$python" "$WT_SOURCE_DIR/analysis/background.py" "$dir/runs/$1" --json
}
check() {  # report, python expression over ranks (each a report), message
  "$python" -c "import json,sys; reports=json.loads(sys.argv[1]); ranks=list(reports.values())
sys.exit(0 if ($2) else 1)" "$1" || fail "$3: $1"
  echo "ok $3"
}
pipeline=$'kind = "pipeline"\nmicrobatches = 1'
# Sends through MPI for the send gate: through the node's shared window (the default) a send
# ends when it is made, and no send is in flight for the gate to guard or its control to show.
r=$(WAVETRAIN_SHM_POINT_TO_POINT_MB=0 report priority "$pipeline")
check "$r" "all(x['tasklets'] > 0 for x in ranks) and all(x['runnable'] == 0 for x in ranks)" \
  "priority: tasklets only while every foreground stream waits"
check "$r" "all(x['over_bound'] == 0 for x in ranks)" "pacing: multi-node tasklets within tasklet_ms"
# The time shares tile the traced steps, and their background share is the tasklets' time,
# found by when each ran (the tasklets counted above go by their foreground step).
t="x['time']"
shares="[sum(v for k, v in $t.items() if k not in ('held', 'wall_s')) + sum($t['held'].values())
         for x in ranks]"
filled="all(abs($t['background'] * $t['wall_s'] - x['tasklet_s']) <= 0.05 * x['tasklet_s'] + 1e-3
            and x['tasklet_s'] > 0 for x in ranks)"
check "$r" "all(abs(s - 1) < 1e-9 for s in $shares) and $filled" \
  "time shares: the traced steps' wall time, all of it; the background's, its tasklets' time"
check "$r" "all(x['in_send'] == 0 for x in ranks)" \
  "pipeline: no tasklet while a foreground send is in flight (block_during_send)"
r=$(WAVETRAIN_SHM_POINT_TO_POINT_MB=0 report send_allowed "$pipeline" 'block_during_send = false')
check "$r" "sum(x['in_send'] for x in ranks) > 0" "block_during_send = false: tasklets during sends"
r=$(report equal "$pipeline" "priority = false")
check "$r" "sum(x['runnable'] for x in ranks) > 0" "priority = false: tasklets while the foreground can issue"

ticktock='kind = "ticktock"'
r=$(report allreduce "$ticktock")
check "$r" "all(x['in_allreduce'] == 0 for x in ranks) and sum(x['held'].get('held_allreduce', 0) for x in ranks) > 0" \
  "ticktock: no tasklet during a foreground allreduce, the gate held"
r=$(report allreduce_allowed "$ticktock" 'block_during_allreduce = false')
check "$r" "sum(x['in_allreduce'] for x in ranks) > 0" "block_during_allreduce = false: tasklets during allreduces"
r=$(report allreduce_equal "$ticktock" "priority = false")
check "$r" "sum(x['in_allreduce'] for x in ranks) > 0 and sum(x['runnable'] for x in ranks) > 0" \
  "ticktock, priority = false: tasklets during allreduces and while the foreground can issue"

# Feedback. Rank 0's instruction 4 waits for the gradients from rank 1 (a receive: recv_min_ms
# high so the long-receive rule stays out of it); 200 times its solo time longer in steps 8 and 9
# (a multiple, not milliseconds: on a loaded machine a 10 ms solo wait made 200 ms less than the
# target), far above the 40x target even with background tasklets: held from step 9, readmitted
# once the average relaxes (weight 0.1 a run, about 15 runs). The target is that high because
# beside a CPU hog and two other tests an unslowed wait ran 20x its solo time (held in steps 3-7
# of a fresh-clone run under load).
fg_deck "$dir/feedback.toml" feedback "$pipeline" \
  $'feedback = true\nrecv_min_ms = 10000\nslowdown_target = 40\newma_slow = 0.1'
grep -q "^4: wait" <("$WAVETRAIN" "$dir/feedback.toml" --show-schedule --ranks 2 | sed -n '/rank 0 stream 0/,/rank 1/p' | sed 's/^ *//') ||
  fail "rank 0's instruction 4 is not the wait for the gradients"
WAVETRAIN_TEST_SLOW_FOREGROUND=0:4:x200:8:10 mpirun -np 2 "$WAVETRAIN" "$dir/feedback.toml" --steps 40 --quiet \
  >"$dir/feedback.out" 2>&1 || { cat "$dir/feedback.out"; fail "feedback run failed"; }
"$python" - "$dir/runs/feedback/background/rank_0/tasklets.csv" <<'PY' || fail "feedback"
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["fg_stream"] == "0" and r["fg_index"] == "4"]
ran = sorted({int(r["fg_step"]) for r in rows if r["kind"] == "tasklet"})
held = sorted({int(r["fg_step"]) for r in rows if r["kind"] == "held_feedback"})
print("tasklets in steps", ran)
print("held (feedback) in steps", held)
before = [s for s in ran if s < 8]
during = [s for s in ran if 9 <= s < 12]
after = [s for s in ran if s >= 12]
ok = len(before) >= 2 and not during and set(range(9, 12)) <= set(held) and after
sys.exit(0 if ok else 1)
PY
echo "ok feedback: held while the slowed wait's average is above target, readmitted after"

# Bad input.
bad() {  # name, background lines, [device lines]
  fg_deck "$dir/$1.toml" "$1" 'kind = "gang"' "$2"
  printf '[device]\n%s\n' "${3:-}" >>"$dir/$1.toml"
}
pointing_at() {  # name, background deck file
  fg_deck "$dir/$1.toml" "$1" 'kind = "gang"' ""
  sed -i "s/deck = \"bg.toml\"/deck = \"$2\"/" "$dir/$1.toml"
}
sed 's/\[train\]/[schedule]\nkind = "pipeline"\n[train]/' "$dir/bg.toml" >"$dir/bg_pipeline.toml"
pointing_at communicates bg_pipeline.toml
expect_status communicates 2 'bg_pipeline.toml:[0-9]*: schedule.kind: a background job runs alone' "$dir/communicates.toml"
sed 's/^\[data\]$/[data]\ndistribution = "scatter"/' "$dir/bg.toml" >"$dir/bg_scatter.toml"
pointing_at scatter bg_scatter.toml
expect_status scatter 2 'data.distribution: a background job reads its own data' "$dir/scatter.toml"
pointing_at missing bg_missing.toml
expect_status missing 2 "missing.toml:[0-9]*: background.deck: file not found: .*bg_missing.toml" "$dir/missing.toml"
printf '[train]\nglobal_batch = "eight"\n' >"$dir/bg_malformed.toml"
pointing_at malformed bg_malformed.toml
expect_status malformed 2 'bg_malformed.toml:2: train.global_batch' "$dir/malformed.toml"
bad over_budget 'memory_limit = 90000000' 'memory_limit = 50000000'
expect_status over_budget 2 'over_budget.toml:[0-9]*: background.memory_limit: 90000000 bytes is more than' "$dir/over_budget.toml"
bad tasklet 'tasklet_ms = 0'
expect_status tasklet 2 'tasklet.toml:[0-9]*: background.tasklet_ms' "$dir/tasklet.toml"
bad target 'slowdown_target = 0.5'
expect_status target 2 'target.toml:[0-9]*: background.slowdown_target' "$dir/target.toml"
bad ewma 'ewma_slow = 1.5'
expect_status ewma 2 'ewma.toml:[0-9]*: background.ewma_slow' "$dir/ewma.toml"
bad depth 'depth = 0'
expect_status depth 2 'depth.toml:[0-9]*: background.depth' "$dir/depth.toml"
printf '[run]\nname = "hpo"\noutput_dir = "%s/runs"\n[colocate]\ndecks = ["bg.toml"]\n[background]\ndeck = "bg.toml"\n' "$dir" >"$dir/colocating.toml"
expect_status colocating 2 'colocating.toml:[0-9]*: background.deck: a co-location deck' "$dir/colocating.toml"

# The shipped decks run as docs/background.md shows (paths pointed at this machine's data and models).
mkdir -p "$dir/inputs"
for d in pipeline_with_background lenet_background; do
  sed "s|\.\./data/fashion_mnist\.h5|$data|; s|\.\./models/|$WT_SOURCE_DIR/models/|" \
    "$WT_SOURCE_DIR/inputs/$d.toml" >"$dir/inputs/$d.toml"
done
(cd "$dir" && mpirun -np 2 "$WAVETRAIN" inputs/pipeline_with_background.toml --steps 30 --quiet \
  --set trace.enabled=true --set trace.start_step=10 --set trace.end_step=20) >"$dir/shipped.out" 2>&1 ||
  { cat "$dir/shipped.out"; fail "the shipped background decks failed"; }
grep -q "^background: " "$dir/runs/pipeline_with_background/log.txt" || fail "shipped: no background summary"
"$python" "$WT_SOURCE_DIR/analysis/background.py" "$dir/runs/pipeline_with_background" ||
  fail "analysis/background.py on the shipped decks' run"

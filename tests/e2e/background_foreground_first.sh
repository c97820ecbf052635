#!/usr/bin/env bash
# background.policy = "foreground_first" (issue 35), on a 2-rank lenet pipeline with one
# microbatch and a local lenet background on every rank:
#   - a background whose nodes are longer than a tasklet trains on micro-batches, the foreground
#     bitwise as alone and each rank's background after K steps its deck alone within 1e-5
#     (gradients summed in another order);
#   - after the foreground's warm-up each rank refits the split to its own longest wait, and the
#     first stage's background fills its one wait in many steps;
#   - the whole-run budget runs one step in solo_every alone, whatever the timings, and every
#     rank runs alone the steps any rank's budget holds;
#   - unsplit (microbatches = 1), no background node starts that would run past the
#     foreground's expected idle time: an mlp foreground (sub-millisecond waits) holds a batch-32
#     lenet background's nodes (milliseconds each) back, where policy = "deeppool" starts them
#     (the check can fail);
#   - where the background's longest node, split as finely as the refit goes, is over half a
#     rank's longest wait, that rank leaves its background out after the warm-up, and with none
#     left the foreground runs as alone.
# slowdown_target = 100 keeps the budget from holding every step of these short runs (the
# background's profiling steps alone put it in debt for longer). failure.stall_seconds = 30: a
# collective the ranks disagree on (the step-end vote one skips) is reported, not a hang.
source "$(dirname "$0")/lib/common.bash"
steps=20
source "$(dirname "$0")/lib/background_pipeline.bash"
run_fg alone ""
"$WAVETRAIN" "$dir/bg.toml" --quiet >/dev/null || fail "the background deck alone failed"

# Micro-batches, chosen by the background's longest node (lenet's conv2 at batch 8: milliseconds,
# over the 0.5 ms tasklet).
run_fg split $'solo_every = 5\nslowdown_target = 100'
grep -q "micro-batches of its global batch 8" "$dir/runs/split/log.txt" ||
  { cat "$dir/runs/split/log.txt"; fail "split: the background was not split"; }
same_foreground split
background_is_its_deck() {  # run name: each rank's (micro-batched) background against its deck alone
  local r run k
  for r in 0 1; do
    run="$dir/runs/$1/background/rank_$r"
    k=$(sed -n 's/.*done: \([0-9]*\) steps.*/\1/p' "$run/log.txt")
    [[ -n $k ]] || { cat "$run/log.txt"; fail "$1 rank $r: the background did not finish"; }
    "$python" "$WT_SOURCE_DIR/tests/e2e/lib/same_weights.py" "$(ckpt "$run" "$k")" \
      "$(ckpt "$dir/alone/bg" "$k")" --tolerance 1e-5 ||
      fail "$1 rank $r: the micro-batched background is not its deck alone"
    echo "ok $1 rank $r: after $k steps its deck alone within 1e-5"
  done
}
background_is_its_deck split
echo "ok split: the foreground bitwise as alone"

# Every solo_every-th step after the warm-up runs alone (a held_run_budget row), whatever the
# machine's timings.
"$python" - "$dir/runs/split/background" 5 $steps <<'PY' || fail "split: a stretch without a solo step"
import csv, sys
root, every, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for r in (0, 1):
    rows = list(csv.DictReader(open(f"{root}/rank_{r}/tasklets.csv")))
    alone = sorted({int(x["fg_step"]) for x in rows if x["kind"] == "held_run_budget"})
    gaps = [b - a for a, b in zip(alone, alone[1:])]
    print(f"rank {r}: steps alone by the budget {alone}")
    assert alone and alone[0] <= 2 + every and max(gaps, default=0) <= every and alone[-1] >= steps - every
PY
echo "ok split: one step in 5 alone by the run budget on every rank"

# The same deck on the strict device (a GPU host's rules: work queued, run lazily): the run
# budget's agreement and the policy's paths beside queued foreground work. Its host-side times
# are those of issuing, not running (as on a GPU), so the probe finds no long node and nothing
# is split or refitted, and tasklets wait for an idle device: the background trains in its
# profiling steps only.
mpirun -np 2 "$WAVETRAIN" "$dir/split.toml" --steps $steps --run-dir "$dir/runs/split_strict" \
  --set device.kind=strict >"$dir/split_strict.out" 2>&1 ||
  { cat "$dir/split_strict.out"; fail "split on the strict device failed"; }
same_foreground split_strict
background_is_its_deck split_strict
echo "ok split_strict: the foreground bitwise as alone on the host"

# After the warm-up each rank refits the split to its own idle time: rank 1 (the last stage, idle
# while the first computes) has waits of milliseconds, and trains on fewer, larger micro-batches
# than the 0.5 ms tasklet's split (each rank's background log says so).
for r in 0 1; do
  line=$(grep -m1 "longest wait on rank $r" "$dir/runs/split/background/rank_$r/log.txt") ||
    fail "split rank $r: no refit line in its background log"
  echo "ok split rank $r: ${line#wavetrain: }"
done
m1=$(grep -m1 "longest wait on rank 1" "$dir/runs/split/background/rank_1/log.txt" | sed 's/.*trains on \([0-9]*\) micro.*/\1/')
[[ $m1 -lt 8 ]] || fail "split rank 1: still 8 micro-batches after its refit"

# The first stage's background fills waits in many steps, not only the first: a wait blocked
# again in a later step is a new wait (rank 0 blocks on one receive only, whose expected idle
# time was timed from its first step's and so was always spent; rank 1 finishes its 6 steps in
# two or three).
"$python" - "$dir/runs/split/background" <<'PY' || fail "split: rank 0's background ran in fewer than 3 steps"
import csv, sys
rows = list(csv.DictReader(open(f"{sys.argv[1]}/rank_0/tasklets.csv")))
steps = sorted({int(x["fg_step"]) for x in rows if x["kind"] == "tasklet"})
print(f"rank 0: tasklets in foreground steps {steps}")
assert len(steps) >= 3
PY

# Rank 1's budget starts 0.25 s in debt (a test hook), rank 0's does not: every rank runs alone
# the steps any rank's budget holds (a step alone beside a peer's background work is no solo
# step: it waits for that peer).
WAVETRAIN_TEST_BUDGET_DEBT=1:0.25 run_fg budget $'solo_every = 1000\nslowdown_target = 2'
"$python" - "$dir/runs/budget/background" <<'PY' || fail "budget: the ranks ran different steps alone"
import csv, sys
alone = [sorted({int(x["fg_step"]) for x in csv.DictReader(open(f"{sys.argv[1]}/rank_{r}/tasklets.csv"))
                 if x["kind"] == "held_run_budget"}) for r in (0, 1)]
print(f"steps alone by the run budget: rank 0 {alone[0]}, rank 1 {alone[1]}")
assert alone[0] == alone[1] and alone[0]
PY
same_foreground budget
echo "ok budget: both ranks ran the same steps alone; the foreground bitwise as alone"

# Foreground first: no node starts that would not end inside the expected idle time.
over_idle() {  # run name: tasklets longer than the foreground's expected idle time left
  "$python" - "$dir/runs/$1/background" <<'PY'
import csv, sys
over = total = 0
for r in (0, 1):
    for x in csv.DictReader(open(f"{sys.argv[1]}/rank_{r}/tasklets.csv")):
        if x["kind"] == "tasklet" and float(x["idle_left_ms"]) >= 0:
            total += 1
            over += float(x["planned_ms"]) > float(x["idle_left_ms"])
print(over, total)
PY
}
sed 's/global_batch = 8/global_batch = 32/' "$dir/bg.toml" >"$dir/bg32.toml"
run_fg mlp_alone "" mlp
run_fg unsplit $'microbatches = 1\nslowdown_target = 100' mlp bg32.toml
run_fg deeppool 'policy = "deeppool"' mlp bg32.toml
same_foreground unsplit mlp_alone
same_foreground deeppool mlp_alone
read -r over total < <(over_idle unsplit)
held=$(grep -c '^held_node_too_long' "$dir"/runs/unsplit/background/rank_*/tasklets.csv | awk -F: '{n += $2} END {print n}')
[[ $over == 0 ]] || fail "unsplit: $over of $total tasklets planned past the foreground's expected idle time"
[[ $held -gt 0 ]] || fail "unsplit: no node held back for its length"
echo "ok unsplit: none of $total tasklets planned past the foreground's expected idle time; $held waits held a node back"
# Where the background's longest node, at the finest split the refit takes (the tasklet's),
# is over half a rank's longest wait (a wide 3x3 convolution, 462 M multiply-adds a sample: tens
# of milliseconds, its batch of 2 keeping the probe short; an mlp foreground's waits take tenths
# of a millisecond, a few under a CPU hog), its nodes would not fit that rank's idle time: the
# refit leaves the background out there, saying so, and once no rank has one the foreground runs
# exactly as alone (no tasklet, no profiling step).
cat >"$dir/wide.toml" <<'MODEL'
[model]
name = "wide"
input = [1, 28, 28]
classes = 10
[[layer]]
name = "conv1"
type = "conv2d"
out_channels = 128
kernel = 3
padding = 1
[[layer]]
name = "conv2"
type = "conv2d"
out_channels = 512
kernel = 3
padding = 1
[[layer]]
name = "pool"
type = "global_avgpool"
[[layer]]
name = "fc"
type = "linear"
out_features = 10
[[layer]]
name = "loss"
type = "softmax_xent"
MODEL
sed -e "s|$WT_SOURCE_DIR/models/lenet.toml|$dir/wide.toml|" -e 's/global_batch = 8/global_batch = 2/' \
  "$dir/bg.toml" >"$dir/bg_wide.toml"
run_fg nothing_fits 'slowdown_target = 100' mlp bg_wide.toml
for r in 0 1; do
  line=$(grep -m1 "background left out on rank $r" "$dir/runs/nothing_fits/background/rank_$r/log.txt") ||
    { cat "$dir/nothing_fits.out"; fail "nothing_fits: rank $r did not leave its background out"; }
  echo "ok nothing_fits: ${line#*wavetrain: }"
  ! grep -q '^tasklet' "$dir/runs/nothing_fits/background/rank_$r/tasklets.csv" ||
    fail "nothing_fits: rank $r ran background tasklets"
done
grep -q "^background: 0 steps" "$dir/runs/nothing_fits/log.txt" ||
  fail "nothing_fits: the background trained steps (its profiling) though left out"
same_foreground nothing_fits mlp_alone
echo "ok nothing_fits: no background step on either rank; the foreground bitwise as alone"

read -r over total < <(over_idle deeppool)
[[ $over -gt 0 ]] || fail "deeppool: no tasklet past the expected idle time: the check above cannot fail"
echo "ok deeppool: $over of $total tasklets planned past the foreground's expected idle time"

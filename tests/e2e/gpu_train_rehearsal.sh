#!/usr/bin/env bash
# End to end: tools/gpu-train-check.sh, the script a lent GPU runs (issue 31), rehearsed here with
# the strict device standing in for the GPU, so that a change elsewhere cannot break it unseen
# and spend the GPU's few minutes on a script error. Its schedules, ticktock, checkpoint and
# graphs-past-an-evaluation and graphs-on-2-ranks proofs must each say PASS (the proofs' logic, the decks, the data conversion, the multi-rank launch);
# and a run past WT_TRAIN_TIMEOUT must end as a FAIL with exit status 1, not hang (the guard that
# keeps a hang from spending a GPU's whole time).
source "$(dirname "$0")/lib/common.bash"
script=$WT_SOURCE_DIR/tools/gpu-train-check.sh
build=$(dirname "$WAVETRAIN")

status=0
bash "$script" --build "$build" --device strict --work "$dir/proofs" \
  --only schedules,ticktock,checkpoint,graphs_epoch,graphs_ranks >"$dir/proofs.txt" 2>&1 || status=$?
sed -n '/^== training proofs/,$p' "$dir/proofs.txt"
[[ $status == 0 ]] || { cat "$dir/proofs.txt"; fail "the rehearsal exited $status"; }
for proof in "schedule gang" "schedule pipeline" "schedule waves" "schedule ticktock" \
  "schedule burst" "ticktock two streams" "checkpoint" "graphs past an evaluation" \
  "graphs gang" "graphs pipeline"; do
  grep -q "^proof $proof[ :(].*PASS" "$dir/proofs.txt" || fail "no PASS for '$proof'"
done
if grep -q ': FAIL' "$dir/proofs.txt"; then fail "a proof failed"; fi

# Ten epochs of lenet cannot finish in 5 seconds: the run is stopped, the proof fails, and the
# script says so promptly.
start=$SECONDS status=0
WT_TRAIN_TIMEOUT=5 bash "$script" --build "$build" --device strict --work "$dir/timeout" \
  --only accuracy >"$dir/timeout.txt" 2>&1 || status=$?
cat "$dir/timeout.txt"
[[ $status == 1 ]] || fail "a timed-out proof exited $status, not 1"
# 124: stopped by SIGTERM (wavetrain checkpoints and ends); 137: killed 10 s later.
grep -qE "accuracy: exit (124|137)" "$dir/timeout.txt" || fail "the run was not stopped by the timeout"
grep -q "^proof lenet accuracy: FAIL" "$dir/timeout.txt" || fail "the timed-out proof did not FAIL"
((SECONDS - start < 120)) || fail "the timed-out rehearsal took $((SECONDS - start)) s"
echo "ok"

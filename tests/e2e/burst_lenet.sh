#!/usr/bin/env bash
# burst end to end on 2 ranks: lenet with its fully connected layers forced onto rank 0 (DeepPool's
# plan for small batches) trains to the test accuracy gang reaches on the same batches; a burst
# run resumed from its checkpoint ends bitwise where the uninterrupted one does (the plan comes
# back from the checkpoint); its trace shows rank 1 idle while rank 0 runs the fully connected
# layers, and analysis/timeline.py draws it. Then the planner's own plan trains too.
source "$(dirname "$0")/lib/common.bash"
data=$(fashion_mnist_h5)
deck="$WT_SOURCE_DIR/inputs/fashion_lenet.toml"
fc_on_rank0='burst.ranks=[2,2,2,2,2,2,2,1,1,1,1]'  # conv1..flatten on 2 ranks, fc1..loss on 1
run() {  # name steps [extra args...]
  local name=$1 steps=$2
  shift 2
  mpiexec -n 2 "$WAVETRAIN" "$deck" --set "data.path=\"$data\"" --set train.log_every_steps=20 \
    --steps "$steps" --run-dir "$dir/$name" "$@" >"$dir/$name.txt" 2>&1 ||
    { cat "$dir/$name.txt"; fail "$name: exit status $?"; }
}

run gang 200 --set schedule.kind=gang
run burst 200 --set schedule.kind=burst --set "$fc_on_rank0"
grep -q "burst segments: \[0..6\] on 2 \[7..10\] on 1" "$dir/burst/log.txt" ||
  fail "the forced plan is not in the log: $(grep burst "$dir/burst/log.txt")"
gang_acc=$(last_metric "$dir/gang/metrics.csv" eval accuracy)
burst_acc=$(last_metric "$dir/burst/metrics.csv" eval accuracy)
echo "test accuracy after 200 steps: gang $gang_acc, burst $burst_acc"
awk -v a="$gang_acc" -v b="$burst_acc" 'BEGIN { d = a - b; exit !(a > 0.7 && d < 0.005 && d > -0.005) }' ||
  fail "burst's test accuracy $burst_acc is not gang's $gang_acc"

# Resume: 20 steps, then 20 more from the checkpoint, against 40 straight; with a trace.
traced=(--set schedule.kind=burst --set "$fc_on_rank0" --set checkpoint.every_steps=20
        --set train.eval_every_epoch=false --set trace.enabled=true --set trace.start_step=30
        --set trace.end_step=40)
run straight 40 "${traced[@]}"
run resumed 20 "${traced[@]}"
run resumed 40 "${traced[@]}" --restart
grep -q "burst plan of the checkpoint being resumed" "$dir/resumed/log.txt" ||
  fail "the resumed run did not take the checkpoint's plan"
"$WT_PYTHON" "$WT_SOURCE_DIR/tests/e2e/lib/same_weights.py" \
  "$dir/straight/checkpoints/step_00000040.h5" "$dir/resumed/checkpoints/step_00000040.h5" ||
  fail "the resumed burst run differs from the uninterrupted one"
echo "ok: resumed at step 20, bitwise the uninterrupted run at step 40"
# A resume whose burst.ranks differs from the checkpoint's plan says which plan it uses.
run resumed 50 --set schedule.kind=burst --set 'burst.ranks=[2,2,2,2,2,2,2,2,2,2,2]' \
  --set checkpoint.every_steps=20 --set train.eval_every_epoch=false --restart
grep -q "burst.ranks differs from the plan of the checkpoint being resumed: using the checkpoint's plan" \
  "$dir/resumed/log.txt" || fail "a resume with another burst.ranks did not say which plan it uses"
grep -q "burst segments: \[0..6\] on 2 \[7..10\] on 1" "$dir/resumed/log.txt" ||
  fail "the resume did not keep the checkpoint's plan"

"$WT_PYTHON" "$WT_SOURCE_DIR/analysis/timeline.py" "$dir/straight" -o "$dir/timeline.png" \
  >"$dir/timeline.txt" 2>&1 || fail "timeline.py: $(cat "$dir/timeline.txt")"
[[ -s "$dir/timeline.png" ]] || fail "timeline.py drew nothing"
"$WT_PYTHON" - "$WT_SOURCE_DIR/analysis" "$dir/straight" <<'PY' || fail "the trace does not show rank 1 idle"
import sys
sys.path.insert(0, sys.argv[1])
import wtrun

trace = wtrun.load_trace(sys.argv[2])
busy = []
for r in sorted(trace.ranks):
    ev = trace.ranks[r].events
    compute = [(b, e) for n, b, e in zip(ev["name"], ev["begin"], ev["end"])
               if wtrun.op_class(n) == "compute"]
    busy.append(sum(e - b for b, e in compute))
print("compute seconds over the traced steps: " + ", ".join(f"rank {r} {s:.4f}" for r, s in enumerate(busy)))
sys.exit(0 if busy[1] < 0.9 * busy[0] else 1)
PY
echo "ok: rank 1 computes less than rank 0 (it is idle while the fully connected layers run)"

run planned 20 --set schedule.kind=burst --set train.eval_every_epoch=false
grep "burst" "$dir/planned/log.txt" | sed 's/^/  /'
grep -q "burst plan: predicted step" "$dir/planned/log.txt" || fail "the planner did not plan"

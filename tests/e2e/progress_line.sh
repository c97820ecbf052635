#!/usr/bin/env bash
# End to end: rank 0's progress line shows a real training loss. In a 2-rank pipeline rank 0 is
# the first stage and computes no loss (the last stage does): its line shows the job-wide loss of
# metrics.csv's latest row and that row's step (it printed "loss 0.0000" before). One rank
# (gang) shows its own loss since the last line.
source "$(dirname "$0")/lib/common.bash"
data=$(fashion_mnist_h5)
mpiexec -n 2 --oversubscribe "$WAVETRAIN" "$WT_SOURCE_DIR/inputs/fashion_lenet.toml" \
  --set "data.path=\"$data\"" --set schedule.kind=pipeline --set train.log_every_steps=10 \
  --set run.progress_seconds=0.2 --steps 120 --run-dir "$dir/pipe" | tee "$dir/pipe.txt"
grep -q ' step [0-9]*/120 loss ' "$dir/pipe.txt" || fail "no progress line"
grep ' step [0-9]*/120 loss 0.0000 ' "$dir/pipe.txt" && fail "a progress line shows loss 0.0000"
/usr/bin/python3 - "$dir/pipe.txt" "$dir/pipe/metrics.csv" <<'EOF' || fail "the pipeline's progress loss is not metrics.csv's"
import csv, re, sys
rows = {int(r["step"]): float(r["loss"]) for r in csv.DictReader(open(sys.argv[2]))
        if r["kind"] == "train"}
shown = [(int(step), float(loss)) for loss, step in
         re.findall(r" loss ([0-9.]+) \(step (\d+), all ranks\)", open(sys.argv[1]).read())]
assert shown, "no progress line names the metrics row it shows"
for step, loss in shown:
    assert abs(rows[step] - loss) <= 5e-5, (step, loss, rows[step])
print(f"{len(shown)} progress lines, each the loss of its metrics row")
EOF

"$WAVETRAIN" "$WT_SOURCE_DIR/inputs/fashion_lenet.toml" --set "data.path=\"$data\"" \
  --set run.progress_seconds=0.2 --steps 60 --run-dir "$dir/gang" | tee "$dir/gang.txt"
grep -E ' step [0-9]+/60 loss [0-9]+\.[0-9]{4} lr ' "$dir/gang.txt" | grep -vq ' loss 0.0000 ' ||
  fail "one rank's progress line does not show its own loss"
echo "ok"

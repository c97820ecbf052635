#!/usr/bin/env bash
# ScaleDNN's weight codec end to end: waves on 2 ranks trains lenet for one Fashion-MNIST epoch
# with every stage broadcast encoded (scalednn, raw mode) to within 1 point of test accuracy of
# the exact run (the paper's claim; bench/scalednn.sh runs 3 epochs and the other modes), and
# the trace records the encoded bytes: about a third of the exact run's broadcast bytes.
source "$(dirname "$0")/lib/common.bash"
data=$(fashion_mnist_h5)
run() {  # name codec
  mpiexec -n 2 "$WAVETRAIN" "$WT_SOURCE_DIR/inputs/fashion_lenet.toml" --set "data.path=\"$data\"" \
    --set schedule.kind=waves --set "compress.weights=$2" --set train.epochs=1 \
    --set train.log_every_steps=100 --set trace.enabled=true --set trace.start_step=10 \
    --set trace.end_step=12 --run-dir "$dir/$1" >"$dir/$1.txt" 2>&1 ||
    { cat "$dir/$1.txt"; fail "$1: exit status $?"; }
}
run exact none
run encoded scalednn
exact=$(last_metric "$dir/exact/metrics.csv" eval accuracy)
encoded=$(last_metric "$dir/encoded/metrics.csv" eval accuracy)
echo "test accuracy after one epoch: exact $exact, scalednn $encoded"
awk -v a="$exact" -v b="$encoded" 'BEGIN { exit !(a > 0.8 && a - b < 0.01 && b - a < 0.01) }' ||
  fail "the codec's accuracy $encoded is not within 1 point of $exact"
"$WT_PYTHON" - "$WT_SOURCE_DIR/analysis" "$dir/exact" "$dir/encoded" <<'PY' || fail "broadcast bytes"
import sys
sys.path.insert(0, sys.argv[1])
import wtrun
def broadcast_bytes(run):
    total = 0
    for r, rank in wtrun.load_trace(run).ranks.items():
        ev = rank.events
        total += sum(int(b) for n, b in zip(ev["name"], ev["bytes"]) if n == "Broadcast")
    return total
exact, encoded = broadcast_bytes(sys.argv[2]), broadcast_bytes(sys.argv[3])
print(f"broadcast bytes in the traced steps: exact {exact}, scalednn {encoded} ({encoded / exact:.3f})")
sys.exit(0 if 0.30 < encoded / exact < 0.40 else 1)
PY

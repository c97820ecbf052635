#!/usr/bin/env bash
# End to end: the default deck's lenet trains on real Fashion-MNIST from HDF5 for 300 steps on one
# rank; the training loss must fall from ln(10) = 2.30 to below 0.60 and test accuracy exceed 0.78.
source "$(dirname "$0")/lib/common.bash"
data=$(fashion_mnist_h5)
"$WAVETRAIN" "$WT_SOURCE_DIR/inputs/fashion_lenet.toml" --set "data.path=\"$data\"" \
  --steps 300 --run-dir "$dir/run" | tee "$dir/out.txt"
for f in deck.toml metrics.csv log.txt summary.json; do
  [[ -s "$dir/run/$f" ]] || fail "run directory lacks $f"
done
loss=$(last_metric "$dir/run/metrics.csv" train loss)
acc=$(last_metric "$dir/run/metrics.csv" eval accuracy)
echo "final train loss $loss, test accuracy $acc"
awk -v l="$loss" 'BEGIN { exit !(l < 0.60) }' || fail "loss $loss did not fall below 0.60"
awk -v a="$acc" 'BEGIN { exit !(a > 0.78) }' || fail "test accuracy $acc not above 0.78"
grep -q "test accuracy" "$dir/out.txt" || fail "no test accuracy printed"

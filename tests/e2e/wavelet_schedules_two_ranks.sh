#!/usr/bin/env bash
# End to end: the schedules of issue 5 on 2 MPI ranks on real Fashion-MNIST. pipeline with 4
# microbatches (GPipe) and waves (Wavelet's round-robin partitions) train the MLP cut into two
# stages, ticktock (Wavelet's tick-tock data waves) two replicas of it, for 60 steps each; the loss
# must fall and the test accuracy (evaluated with every stage's weights gathered from its owner)
# must be reported and well above chance.
source "$(dirname "$0")/lib/common.bash"
data=$(fashion_mnist_h5)
for kind in pipeline waves ticktock; do
  mpiexec -n 2 --oversubscribe "$WAVETRAIN" "$WT_SOURCE_DIR/inputs/fashion_mlp.toml" \
    --set "data.path=\"$data\"" --set "schedule.kind=\"$kind\"" --set schedule.microbatches=4 \
    --set train.log_every_steps=10 --steps 60 --run-dir "$dir/$kind" | tee "$dir/$kind.txt"
  grep -q "schedule $kind on 2 ranks" "$dir/$kind.txt" || fail "$kind: did not run on 2 ranks"
  grep -q "final test accuracy" "$dir/$kind.txt" || fail "$kind: no final accuracy reported"
  first=$(awk -F, '$1=="train" { print $4; exit }' "$dir/$kind/metrics.csv")
  last=$(last_metric "$dir/$kind/metrics.csv" train loss)
  acc=$(last_metric "$dir/$kind/metrics.csv" eval accuracy)
  echo "$kind: loss $first -> $last, test accuracy $acc"
  awk -v a="$first" -v b="$last" 'BEGIN { exit !(b < a - 0.5) }' ||
    fail "$kind: loss did not fall ($first -> $last)"
  awk -v a="$acc" 'BEGIN { exit !(a > 0.5) }' || fail "$kind: test accuracy $acc"
done

# A cut list that does not give one stage per rank is bad input: exit status 2, key named.
set +e
mpiexec -n 2 --oversubscribe "$WAVETRAIN" "$WT_SOURCE_DIR/inputs/fashion_mlp.toml" \
  --set "data.path=\"$data\"" --set 'schedule.kind="waves"' --set 'schedule.cuts=[2,4]' \
  --steps 2 --run-dir "$dir/bad" 2>"$dir/bad.txt"
rc=$?
set -e
[[ $rc == 2 ]] || fail "bad cuts: exit status $rc, expected 2"
grep -q "schedule.cuts" "$dir/bad.txt" || fail "bad cuts: message does not name schedule.cuts"

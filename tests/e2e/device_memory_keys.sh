#!/usr/bin/env bash
# device.release_threshold and device.max_split_bytes reach the rank's allocator: five lenet steps
# reserve less at their peak when cached segments go back above a 1-byte threshold, and more when
# no cached block over 1 MiB may be split (each large request takes a whole cached block or a new
# segment), while training the same model. Preload is off: the next batch, read on a background
# thread, would otherwise land before or after a step's peak by timing.
source "$(dirname "$0")/lib/common.bash"
data=$(fashion_mnist_h5)

run() {  # name, extra --set options
  local name=$1; shift
  "$WAVETRAIN" "$WT_SOURCE_DIR/inputs/fashion_lenet.toml" --set "data.path=\"$data\"" \
    --set data.preload=false --set train.eval_every_epoch=false --steps 5 --quiet \
    --run-dir "$dir/$name" "$@" >"$dir/$name.out" 2>&1 || { cat "$dir/$name.out"; fail "$name run failed"; }
}
peak() { last_metric "$dir/$1/metrics.csv" train peak_device_mb; }
loss() { last_metric "$dir/$1/metrics.csv" train loss; }

run default
run threshold --set device.release_threshold=1
run no_split --set device.max_split_bytes=1048576
grep -q "^release_threshold = 1 " "$dir/threshold/deck.toml" || fail "the resolved deck lacks release_threshold"
grep -q "^max_split_bytes = 1048576 " "$dir/no_split/deck.toml" || fail "the resolved deck lacks max_split_bytes"
echo "peak_device_mb: default $(peak default), release_threshold=1 $(peak threshold), max_split_bytes=1MiB $(peak no_split)"
awk -v a="$(peak threshold)" -v b="$(peak default)" 'BEGIN { exit !(a < b) }' ||
  fail "release_threshold = 1 should lower the peak of reserved memory"
awk -v a="$(peak no_split)" -v b="$(peak default)" 'BEGIN { exit !(a > b) }' ||
  fail "max_split_bytes = 1 MiB should raise the peak of reserved memory (whole blocks)"
for name in threshold no_split; do
  [[ $(loss "$name") == "$(loss default)" ]] || fail "$name trained a different model: loss $(loss "$name") vs $(loss default)"
done
echo "ok: same loss $(loss default)"

#!/usr/bin/env bash
# End to end: the character-level transformer trains on real text (the start of the King James
# Bible from Debian's bible-kjv-text, converted by text_to_hdf5) for a few dozen steps on one rank.
# The training loss must fall well below ln(73) = 4.29 (uniform over the vocabulary) and the test
# loss must be reported in bits per character.
source "$(dirname "$0")/lib/common.bash"
command -v bible >/dev/null || fail "the 'bible' program (bible-kjv, bible-kjv-text) is not installed"
data="$dir/kjv_small.h5"
bash "$WT_SOURCE_DIR/tools/prepare_kjv.sh" "$data" "$WT_BINARY_DIR" 300000
"$WAVETRAIN" "$WT_SOURCE_DIR/inputs/text_transformer.toml" --set "data.path=\"$data\"" \
  --set train.global_batch=16 --set lr_schedule.warmup_steps=10 --steps 60 \
  --set train.log_every_steps=10 --run-dir "$dir/run" | tee "$dir/out.txt"
first=$(awk -F, 'NR==1 { for (i=1;i<=NF;i++) idx[$i]=i; next } $1=="train" { print $(idx["loss"]); exit }' "$dir/run/metrics.csv")
loss=$(last_metric "$dir/run/metrics.csv" train loss)
test_loss=$(last_metric "$dir/run/metrics.csv" eval loss)
echo "train loss over steps 1-10 $first, over the last 10 steps $loss; test loss $test_loss"
awk -v f="$first" -v l="$loss" 'BEGIN { exit !(l < 3.2 && l < f - 0.5) }' ||
  fail "train loss did not fall: $first -> $loss"
awk -v t="$test_loss" 'BEGIN { exit !(t > 0 && t < 3.4) }' || fail "test loss $test_loss"
grep -q "bits per token" "$dir/out.txt" || fail "no bits per token printed"

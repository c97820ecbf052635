#!/usr/bin/env bash
# background.split_backward (issue 35), on the 2-rank lenet pipeline with a local lenet
# background on every rank: under foreground_first the background runs conv2's backward in
# halves (its input's gradient, then its weights'), each a node of its own, and
#   - trains bitwise the model it trains with whole backward passes (the same micro-batches):
#     each rank's background checkpoint after its steps, against split_backward = false's;
#   - leaves the foreground bitwise as alone.
# conv1 reads the data, whose gradient nothing needs: its backward stays whole.
source "$(dirname "$0")/lib/common.bash"
steps=20
source "$(dirname "$0")/lib/background_pipeline.bash"

run_fg alone ""
fixed=$'solo_every = 5\nslowdown_target = 100\nmicrobatches = 2'
run_fg halves "$fixed"
run_fg whole "$fixed"$'\nsplit_backward = false'
grep -q "the backward of conv2 runs in halves" "$dir/runs/halves/log.txt" ||
  { cat "$dir/runs/halves/log.txt"; fail "halves: no halves in the background's program"; }
! grep -q "runs in halves" "$dir/runs/whole/log.txt" ||
  fail "whole: halves with split_backward = false"
echo "ok halves: $(grep -m1 -o 'the backward of .* runs in halves' "$dir/runs/halves/log.txt")"
same_foreground halves
same_foreground whole
echo "ok the foreground bitwise as alone, with halves and without"

done_steps() { sed -n 's/.*done: \([0-9]*\) steps.*/\1/p' "$dir/runs/$1/background/rank_$2/log.txt"; }
for r in 0 1; do  # at the fewer steps of the two (checkpoints every step, all kept)
  a=$(done_steps halves $r) b=$(done_steps whole $r)
  [[ -n $a && -n $b ]] || fail "rank $r: a background did not finish ('$a', '$b' steps)"
  k=$((a < b ? a : b))
  ((k > 0)) || fail "rank $r: a background trained no step"
  "$python" "$WT_SOURCE_DIR/tests/e2e/lib/same_weights.py" \
    "$(ckpt "$dir/runs/halves/background/rank_$r" "$k")" \
    "$(ckpt "$dir/runs/whole/background/rank_$r" "$k")" ||
    fail "rank $r: the background with halves is not bitwise the one without"
  echo "ok rank $r: after $k steps the background with halves is bitwise the one without"
done


#!/usr/bin/env bash
# background.split_backward (issue 35), on the 2-rank lenet pipeline with a local lenet
# background on every rank: under foreground_first the background runs conv2's backward in
# halves (its input's gradient, then its weights'), each a node of its own, and
#   - trains bitwise the model it trains with whole backward passes (the same micro-batches):
#     each rank's background checkpoint after its steps, against split_backward = false's;
#   - leaves the foreground bitwise as alone;
#   - both also on the strict device;
#   - and an early free planted in the executor (the input's half freeing what the weights' half
#     reads) is caught by that comparison, with a clear message.
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
same_backgrounds() {  # run A, run B: each rank's background bitwise, at the fewer steps of the two
  local r a b k  # (checkpoints every step, all kept)
  for r in 0 1; do
    a=$(done_steps "$1" $r) b=$(done_steps "$2" $r)
    [[ -n $a && -n $b ]] || fail "$1 rank $r: a background did not finish ('$a', '$b' steps)"
    k=$((a < b ? a : b))
    ((k > 0)) || fail "$1 rank $r: a background trained no step"
    "$python" "$WT_SOURCE_DIR/tests/e2e/lib/same_weights.py" \
      "$(ckpt "$dir/runs/$1/background/rank_$r" "$k")" \
      "$(ckpt "$dir/runs/$2/background/rank_$r" "$k")" >"$dir/$1.same.txt" 2>&1 || {
      echo "FAIL: $1 rank $r: the background with halves is not bitwise the one without ($2)"
      cat "$dir/$1.same.txt"
      return 1
    }
    echo "ok $1 rank $r: after $k steps the background with halves is bitwise $2's"
  done
}
same_backgrounds halves whole || exit 1

# The strict device (a GPU host's rules: work queued, run lazily): the same halves, bitwise.
strict=$'\n[device]\nkind = "strict"'
run_fg halves_strict "$fixed$strict"
run_fg whole_strict "$fixed"$'\nsplit_backward = false'"$strict"
same_foreground halves_strict
same_backgrounds halves_strict whole_strict || exit 1

# Planted (exec/planted_bug.hpp): the input's half frees the node's gradient and saved state as a
# whole pass would. Nothing faults, the weights' half adds nothing: the comparison must catch it.
WAVETRAIN_TEST_PLANT_BUG=halves_free_early run_fg planted "$fixed"
if same_backgrounds planted whole >"$dir/planted.txt"; then
  cat "$dir/planted.txt"
  fail "planted halves_free_early: not caught"
fi
grep -m1 "^FAIL" "$dir/planted.txt" | sed 's/^FAIL/ok caught/'
same_foreground planted

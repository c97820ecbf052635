#!/usr/bin/env bash
# The strict device catches the six ordering bugs of a CUDA host program that the host device
# hides, each planted in the real code by WAVETRAIN_TEST_PLANT_BUG (exec/planted_bug.hpp), on 2
# MPI ranks: on the host device the run trains to the end (exit 0); on the strict device it ends
# within 30 s with exit status 1 and one message naming the instruction, the stream and the
# memory involved. The three program bugs are planted after the validator passed the program.
# (step_before_wait: the Step's first reader of the gradient is the non-finite count.)
source "$(dirname "$0")/lib/common.bash"
fashion=$(fashion_mnist_h5)

run() {  # bug device schedule deck -> exit status; output in $dir/<bug>-<device>.txt
  local out="$dir/$1-$2.txt" status=0
  WAVETRAIN_TEST_PLANT_BUG=$1 timeout -k 5 60 mpiexec -n 2 --oversubscribe "$WAVETRAIN" \
    "$WT_SOURCE_DIR/inputs/fashion_$4.toml" --quiet --set "data.path=\"$fashion\"" \
    --set "schedule.kind=\"$3\"" --set "device.kind=\"$2\"" --steps 10 \
    --run-dir "$dir/$1-$2" >"$out" 2>&1 || status=$?
  echo "$status"
}

# bug, schedule, deck, and what the strict device's message must say (extended regexes).
# completed_always needs a block to change streams: LeNet's batches, whose sizes the compute
# stream's freed blocks fit, do; MLP's stay on their own streams' pools.
cases=(
  "wait_after_read|waves|mlp|relu_forward of fwd stage=1.* reads it while the transfer's write of recv_act"
  "free_sent_gradient|pipeline|mlp|poisoning of freed memory of .* writes it while the transfer's read of send_grad"
  "read_totals_unsynced|gang|mlp|host code accessed device memory of 'the step's loss and accuracy totals and the non-finite gradient counts'"
  "step_before_wait|gang|mlp|count_nonfinite_into of step stage=0 on stream 0 .*parameter gradients.* reads it while the transfer's write of allreduce"
  "keep_on_other_stream|ticktock|mlp|copy of keep_grad stage=0 on stream 1 .* reads it while"
  "completed_always|ticktock|lenet|the copy from host of load .* on stream 1 writes it while the poisoning of freed memory .* on stream 0"
)
for c in "${cases[@]}"; do
  IFS='|' read -r bug schedule deck expected <<<"$c"
  status=$(run "$bug" host "$schedule" "$deck")
  [[ $status == 0 ]] || { cat "$dir/$bug-host.txt"; fail "$bug: the host device run exited $status"; }
  start=$SECONDS
  status=$(run "$bug" strict "$schedule" "$deck")
  took=$((SECONDS - start))
  out="$dir/$bug-strict.txt"
  [[ $status == 1 ]] || { cat "$out"; fail "$bug: strict exit status $status, expected 1"; }
  ((took <= 30)) || fail "$bug: the strict run took $took s (> 30)"
  grep -qE -- "$expected" "$out" || { cat "$out"; fail "$bug: the message does not match '$expected'"; }
  grep -q "stream" "$out" || fail "$bug: the message names no stream"
  echo "ok: $bug ($schedule): host trains on; strict exit 1 in ${took} s: $(grep -m1 'wavetrain: rank' "$out" | cut -c1-160)..."
done

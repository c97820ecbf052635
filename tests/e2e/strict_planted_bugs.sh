#!/usr/bin/env bash
# The strict device catches the ordering bugs of a CUDA host program that the host device hides,
# each planted in the real code by WAVETRAIN_TEST_PLANT_BUG (exec/planted_bug.hpp), on 2 MPI
# ranks: on the host device the run trains to the end (exit 0); on the strict device it ends
# within 30 s with exit status 1 and one message naming the instruction, the stream and the
# memory involved, on each of the strict stream orders 1 to 3. The three program bugs are planted
# after the validator passed the program. (step_before_wait: the Step's first reader of the
# gradient is the non-finite count.) comm_not_gated, record_done_at_issue and completion_after_done
# are bugs in the device glue that the CUDA backend ports (device/strict_program_events.cpp): a
# transfer that does not wait for its stream, a Record complete when issued, and completion work
# (the codec's decode) after its event. The last three: a Record moved before the work it stands
# for and a Wait on the wrong event (program bugs), and a kernel writing a buffer a transfer reads.
source "$(dirname "$0")/lib/common.bash"
fashion=$(fashion_mnist_h5)

run() {  # bug device schedule deck [seed] -> exit status; output in $dir/<bug>-<device><seed>.txt
  local out="$dir/$1-$2${5:-}.txt" status=0
  local deck=${4%% *} more=()
  [[ $4 == *" "* ]] && read -ra more <<<"${4#* }"
  # 180 s: a hang still ends, and a strict run of 10 steps (seconds when quiet) does not run out
  # of time beside a loaded machine's other tests (60 s did once, under six compilers).
  WAVETRAIN_TEST_PLANT_BUG=$1 timeout -k 5 180 mpiexec -n 2 --oversubscribe "$WAVETRAIN" \
    "$WT_SOURCE_DIR/inputs/fashion_$deck.toml" --quiet --set "data.path=\"$fashion\"" \
    --set "schedule.kind=\"$3\"" --set "device.kind=\"$2\"" --steps 10 \
    --set "device.strict_seed=${5:-1}" "${more[@]}" --run-dir "$dir/$1-$2${5:-}" >"$out" 2>&1 ||
    status=$?
  echo "$status"
}

# bug, schedule, deck, and what the strict device's message must say (extended regexes).
# completed_always needs a block to change streams: LeNet's batches, whose sizes the compute
# stream's freed blocks fit, do; MLP's stay on their own streams' pools.
cases=(
  "wait_after_read|waves|mlp|relu_forward of fwd stage=1.* reads it while the transfer's write of recv_act"
  "free_sent_gradient|pipeline|mlp|poisoning of freed memory of .* writes it while the transfer's read of send_grad"
  "read_totals_unsynced|gang|mlp|host code accessed device memory of 'the step's loss and accuracy totals and the step's input checks and the non-finite gradient counts'"
  "step_before_wait|gang|mlp|count_nonfinite_into of step stage=0 on stream 0 .*parameter gradients.* reads it while the transfer's write of allreduce"
  "keep_on_other_stream|ticktock|mlp|copy of keep_grad stage=0 on stream 1 .* reads it while"
  "completed_always|ticktock|lenet|(a batch of raw uint8 inputs|a batch of inputs) of load .* on stream 1 writes it while the poisoning of freed memory .* on stream 0"
  "host_copy_in_allreduce|ticktock|mlp|a staged copy to the host .*parameter gradients.* reads it while the transfer's write of allreduce"
  "comm_not_gated|gang|mlp|the transfer of allreduce .* on stream 0 .*parameter gradients.* started when stream 0 had run"
  "record_done_at_issue|ticktock|mlp|wait event=[0-9]+ on stream 1 .* passed when stream 0 had run .* record event=[0-9]+ on stream 0 covers .*tensor '"
  "completion_after_done|waves|mlp --set compress.weights=scalednn|passed before the transfer of bcast .* on stream [0-9] .*parameter values.* and its completion work had run"
  "record_before_work|ticktock|mlp|accumulate of add_kept_grad .* on stream 1 .*replica 0's kept gradient.* reads it while copy of keep_grad .* on stream 0"
  "wait_on_wrong_event|ticktock|mlp|accumulate of add_kept_grad .* on stream 1 .*replica 0's kept gradient.* reads it while copy of keep_grad .* on stream 0"
  "write_during_transfer|ticktock|mlp|fill of allreduce .* on stream 0 .*parameter gradients.* writes it while the transfer's write of allreduce"
)
for c in "${cases[@]}"; do
  IFS='|' read -r bug schedule deck expected <<<"$c"
  status=$(run "$bug" host "$schedule" "$deck")
  [[ $status == 0 ]] || { cat "$dir/$bug-host.txt"; fail "$bug: the host device run exited $status"; }
  for seed in 1 2 3; do
    start=$SECONDS
    status=$(run "$bug" strict "$schedule" "$deck" "$seed")
    took=$((SECONDS - start))
    out="$dir/$bug-strict$seed.txt"
    [[ $status == 1 ]] || { cat "$out"; fail "$bug: strict seed $seed exit status $status, expected 1"; }
    ((took <= 30)) || fail "$bug: the strict run took $took s (> 30)"
    grep -qE -- "$expected" "$out" ||
      { cat "$out"; fail "$bug: seed $seed: the message does not match '$expected'"; }
    grep -q "stream" "$out" || fail "$bug: the message names no stream"
  done
  echo "ok: $bug ($schedule): host trains on; strict exit 1 on seeds 1-3 (last ${took} s): $(grep -m1 'wavetrain: rank' "$out" | cut -c1-160)..."
done

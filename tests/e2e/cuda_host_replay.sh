#!/usr/bin/env bash
# A GPU rank's host side of whole-step graphs, run here without a GPU (bench/replay_host_cost.cpp:
# CudaDevice's host code and rules without CUDA, every kernel call and copy of a replayed step
# dropped as GraphReplayOps and CudaDevice drop them, synchronisations counted and refused inside
# a graphed step). The strict device models a replay with its own queues and wrappers; this one
# runs the host code a GPU rank runs, with the host's kernels, not the strict device's: each
# graphable model (mlp with SGD and AdamW, lenet, vgg, resnet in FP32 and bf16,
# transformer_small) and tick-tock's two streams replay every step after the capture with the
# allocator's sequence check passing and one synchronisation a step, each replay but the last
# left running while the next step is issued (device.overlap_steps), and a convolution that takes
# its workspace inside the kernel call (op_scratch_at_issue, CudaOps' fallback) fails there as it
# would on a GPU.
source "$(dirname "$0")/lib/common.bash"
data=$(fashion_mnist_h5)
replay() {  # name deck steps [KEY=VALUE...]: one run, its output (a JSON line) in $dir/name.out
  local name=$1 deck=$2 steps=$3
  shift 3
  mpiexec -n 1 "$WT_BINARY_DIR/replay_host_cost" "$WT_SOURCE_DIR/inputs/$deck" "$steps" 0 \
    checkpoint.every_steps=0 train.eval_every_epoch=false "--run-dir=$dir/$name" "$@" \
    >"$dir/$name.out" 2>&1
}
# AdamW (its per-step corrections through pinned memory) and vgg (dropout's generator state
# through a pinned word) beside the plain SGD decks.
for row in "mlp fashion_mlp.toml 64" "lenet fashion_lenet.toml 64" "resnet fashion_resnet.toml 16" \
  "ticktock fashion_lenet_ticktock_gpu.toml 64 device.kind=\"host\"" \
  "mlp-adamw fashion_mlp.toml 64 optimizer.kind=\"adamw\"" "vgg fashion_vgg.toml 16"; do
  read -r name deck batch extra <<<"$row"
  replay "$name" "$deck" 12 "data.path=\"$data\"" "train.global_batch=$batch" ${extra:+"$extra"} ||
    { cat "$dir/$name.out"; fail "$name: the replayed steps failed"; }
  grep -q '"replays": 9,' "$dir/$name.out" || { cat "$dir/$name.out"; fail "$name: not 9 replays"; }
  grep -q '"synchronizations_per_replay": 1.00,' "$dir/$name.out" ||
    { cat "$dir/$name.out"; fail "$name: not one synchronisation a replayed step"; }
  # Every replay but the last left running while the next step is issued (device.overlap_steps).
  grep -q '"overlapped_steps": 8,' "$dir/$name.out" ||
    { cat "$dir/$name.out"; fail "$name: not 8 replays overlapped with the next step's issue"; }
  echo "ok: $name: 9 replays on the CUDA host side: $(grep -o '"replay_step_us_median": [0-9.]*' "$dir/$name.out")"
done
# bf16: the convolutions' workspaces then hold their bf16 copies too (where this CPU has bf16).
if replay resnet-bf16 fashion_resnet.toml 12 "data.path=\"$data\"" train.global_batch=16 \
  'train.precision="bf16"'; then
  grep -q '"replays": 9,' "$dir/resnet-bf16.out" || fail "resnet bf16: not 9 replays"
  echo "ok: resnet bf16: 9 replays on the CUDA host side"
elif grep -q "needs a CPU with bf16 arithmetic" "$dir/resnet-bf16.out"; then
  echo "skipped: resnet bf16 (this CPU has no bf16 arithmetic)"
else
  cat "$dir/resnet-bf16.out"
  fail "resnet bf16: the replayed steps failed"
fi
kjv="$WT_SOURCE_DIR/data/kjv.h5"
if [[ -f $kjv ]]; then
  replay transformer text_transformer.toml 12 "data.path=\"$kjv\"" train.global_batch=8 ||
    { cat "$dir/transformer.out"; fail "transformer_small: the replayed steps failed"; }
  grep -q '"replays": 9,' "$dir/transformer.out" || fail "transformer_small: not 9 replays"
  echo "ok: transformer_small: 9 replays on the CUDA host side"
else
  echo "skipped: transformer_small (no $kjv: tools/setup.sh makes it)"
fi

# The workspace taken inside the kernel call: in the capture, not in the replay, and the
# allocator's check names the difference at the replay's next allocation.
rc=0
WAVETRAIN_TEST_PLANT_BUG=op_scratch_at_issue replay planted fashion_resnet.toml 6 \
  "data.path=\"$data\"" train.global_batch=16 || rc=$?
[[ $rc -ne 0 ]] || { cat "$dir/planted.out"; fail "op_scratch_at_issue: the replays passed"; }
grep -q "of a replayed step asks for .* where the captured step's asked for" "$dir/planted.out" ||
  { cat "$dir/planted.out"; fail "op_scratch_at_issue: not the allocator's message"; }
echo "ok: op_scratch_at_issue fails its first replay: $(grep -o 'allocation [0-9]* of a replayed step[^:]*' "$dir/planted.out" | head -1)"

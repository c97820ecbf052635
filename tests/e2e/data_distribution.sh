#!/usr/bin/env bash
# ScaleDNN's data path against the master path it improves on: data.distribution = "scatter"
# (rank 0 reads each whole global batch and scatters the parts) trains bitwise what "shard" (each
# rank reads its own rows) trains, on the host and on the strict device, with preloading on and off.
source "$(dirname "$0")/lib/common.bash"
data=$(fashion_mnist_h5)
run() {  # name distribution device preload
  mpiexec -n 2 "$WAVETRAIN" "$WT_SOURCE_DIR/inputs/fashion_mlp.toml" --set "data.path=\"$data\"" \
    --set "data.distribution=$2" --set "device.kind=$3" --set "data.preload=$4" \
    --set checkpoint.every_steps=40 --set train.eval_every_epoch=false --steps 40 \
    --run-dir "$dir/$1" >"$dir/$1.txt" 2>&1 || { cat "$dir/$1.txt"; fail "$1: exit status $?"; }
}
same() { "$WT_PYTHON" "$WT_SOURCE_DIR/tests/e2e/lib/same_weights.py" \
  "$dir/$1/checkpoints/step_00000040.h5" "$dir/$2/checkpoints/step_00000040.h5" ||
  fail "$2 differs from $1"; }
run shard shard host true
run scatter scatter host true
run scatter_no_preload scatter host false
run scatter_strict scatter strict true
same shard scatter
same shard scatter_no_preload
same shard scatter_strict
echo "ok: scatter (host, no preload, strict) == shard bitwise after 40 steps"

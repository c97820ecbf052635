#!/usr/bin/env bash
# Bad input never crashes or hangs: each case must exit with status 2 and print exactly one
# "wavetrain: error:" line naming the file (and line/key where there is one).
source "$(dirname "$0")/lib/common.bash"
data=$(fashion_mnist_h5)
cp "$WT_SOURCE_DIR/models/lenet.toml" "$dir/lenet.toml"

expect_error() {  # name pattern command...
  local name=$1 pattern=$2; shift 2
  set +e
  timeout 120 "$@" >"$dir/$name.out" 2>"$dir/$name.err"
  local rc=$?
  set -e
  [[ $rc == 2 ]] || { cat "$dir/$name.err"; fail "$name: exit status $rc, expected 2"; }
  [[ $(grep -c "wavetrain: error:" "$dir/$name.err") == 1 ]] || { cat "$dir/$name.err"; fail "$name: expected one error line"; }
  grep -q -- "$pattern" "$dir/$name.err" || { cat "$dir/$name.err"; fail "$name: message lacks '$pattern'"; }
  if grep -qiE "terminate called|Segmentation|core dumped|stack trace" "$dir/$name.err"; then fail "$name: crashed"; fi
  echo "ok $name: $(cat "$dir/$name.err")"
}

deck() {  # file, extra lines
  cat >"$1" <<DECK
[data]
path = "$data"
[model]
file = "$dir/lenet.toml"
$2
DECK
}

deck "$dir/unknown_key.toml" $'[train]\nepochz = 3'
expect_error unknown_key "unknown_key.toml:6: train.epochz" "$WAVETRAIN" "$dir/unknown_key.toml"

deck "$dir/bad_type.toml" $'[train]\nglobal_batch = "big"'
expect_error bad_type "bad_type.toml:6: train.global_batch" "$WAVETRAIN" "$dir/bad_type.toml"

deck "$dir/bad_range.toml" $'[optimizer]\nlr = -1.0'
expect_error bad_range "bad_range.toml:6: optimizer.lr" "$WAVETRAIN" "$dir/bad_range.toml"

deck "$dir/bad_schedule.toml" $'[schedule]\nkind = "foo"'
expect_error bad_schedule "unknown schedule kind 'foo'" "$WAVETRAIN" "$dir/bad_schedule.toml"

sed 's/type = "conv2d"/type = "conv3d"/' "$dir/lenet.toml" >"$dir/conv3d.toml"
deck "$dir/conv3d_deck.toml" ""
sed -i "s|$dir/lenet.toml|$dir/conv3d.toml|" "$dir/conv3d_deck.toml"
expect_error unknown_layer "unknown layer type 'conv3d' (known:" "$WAVETRAIN" "$dir/conv3d_deck.toml"

echo "not an HDF5 file" >"$dir/not.h5"
deck "$dir/not_hdf5.toml" ""
sed -i "s|path = \"$data\"|path = \"$dir/not.h5\"|" "$dir/not_hdf5.toml"
expect_error not_hdf5 "not.h5" "$WAVETRAIN" "$dir/not_hdf5.toml"

expect_error missing_deck "no_such_deck.toml" "$WAVETRAIN" "$dir/no_such_deck.toml"
expect_error bad_option "--bogus" "$WAVETRAIN" --bogus "$dir/unknown_key.toml"

# Under MPI every rank sees the error, exits 2, and the message appears once.
expect_error mpi_unknown_key "train.epochz" mpiexec -n 2 --oversubscribe "$WAVETRAIN" "$dir/unknown_key.toml"

deck "$dir/cuda.toml" $'[device]\nkind = "cuda"'
expect_error device_cuda "cuda.toml:6: device.kind: 'cuda'" "$WAVETRAIN" "$dir/cuda.toml"
deck "$dir/device_kind.toml" $'[device]\nkind = "gpu"'
expect_error device_kind "device_kind.toml:6: device.kind: unknown device kind 'gpu' (known: auto, cpu, host, strict, cuda)" \
  "$WAVETRAIN" "$dir/device_kind.toml"
# The allocator's keys: bytes, 0 = off; a negative number or another type is refused.
deck "$dir/release_threshold.toml" $'[device]\nrelease_threshold = -1'
expect_error release_threshold "release_threshold.toml:6: device.release_threshold: must be >= 0" \
  "$WAVETRAIN" "$dir/release_threshold.toml"
deck "$dir/max_split.toml" $'[device]\nmax_split_bytes = "4 MiB"'
expect_error max_split_bytes "max_split.toml:6: device.max_split_bytes: must be an integer" \
  "$WAVETRAIN" "$dir/max_split.toml"
deck "$dir/plain_device.toml" ""
expect_error max_split_bytes_set "command line: device.max_split_bytes: must be >= 0" \
  "$WAVETRAIN" "$dir/plain_device.toml" --set device.max_split_bytes=-1048576
deck "$dir/on_explosion.toml" $'[failure]\non_explosion = "never"'
expect_error on_explosion "on_explosion.toml:6: failure.on_explosion: unknown on_explosion 'never' (known: warn, stop, off)" \
  "$WAVETRAIN" "$dir/on_explosion.toml"

# The device-memory budget is enforced: a 4 MB limit cannot hold LeNet's activations, and the run
# stops with a clear out-of-memory message (exit status 3), not a crash.
deck "$dir/small_memory.toml" $'[device]\nmemory_limit = 4000000'
set +e
timeout 120 "$WAVETRAIN" "$dir/small_memory.toml" --steps 5 --run-dir "$dir/oom" >"$dir/oom.out" 2>"$dir/oom.err"
rc=$?
set -e
[[ $rc == 3 ]] || { cat "$dir/oom.err"; fail "memory limit: exit status $rc, expected 3"; }
grep -q "out of device memory.*device.memory_limit" "$dir/oom.err" || { cat "$dir/oom.err"; fail "memory limit: no clear message"; }
echo "ok memory_limit: $(cat "$dir/oom.err")"

# burst: a plan the run cannot hold is refused before anything runs, on every rank, naming the key.
fc_on_1='[2,2,2,2,2,2,2,1,1,1,1]'
deck "$dir/burst_batch.toml" $'[schedule]\nkind = "burst"\n[burst]\nranks = '"$fc_on_1"$'\n[train]\nglobal_batch = 63'
expect_error burst_batch "burst_batch.toml:10: train.global_batch: 63 samples do not divide over the 2 ranks" \
  mpiexec -n 2 "$WAVETRAIN" "$dir/burst_batch.toml" --run-dir "$dir/burst_batch"
deck "$dir/burst_wide.toml" $'[schedule]\nkind = "burst"\n[burst]\nranks = [4,4,4,4,4,4,4,1,1,1,1]'
expect_error burst_wide "burst_wide.toml:8: burst.ranks: a unit on 4 ranks, but the run has 2" \
  mpiexec -n 2 "$WAVETRAIN" "$dir/burst_wide.toml" --run-dir "$dir/burst_wide"
deck "$dir/burst_three.toml" $'[schedule]\nkind = "burst"\n[burst]\nranks = [3,3,3,3,3,3,3,1,1,1,1]'
expect_error burst_three "burst.ranks: 3 ranks is not a candidate count on 4 ranks (1, 2, 4)" \
  mpiexec -n 4 "$WAVETRAIN" "$dir/burst_three.toml" --run-dir "$dir/burst_three"
deck "$dir/burst_follower.toml" $'[schedule]\nkind = "burst"\n[burst]\nranks = [2,1,2,2,2,2,2,1,1,1,1]'
expect_error burst_follower "burst.ranks: .*relu1" \
  mpiexec -n 2 "$WAVETRAIN" "$dir/burst_follower.toml" --run-dir "$dir/burst_follower"
deck "$dir/burst_short.toml" $'[schedule]\nkind = "burst"\n[burst]\nranks = [2,1]'
expect_error burst_short "burst.ranks: has 2 entries" \
  "$WAVETRAIN" "$dir/burst_short.toml" --run-dir "$dir/burst_short"
# A [burst] key under another schedule would be ignored: refused, naming the key where it is set
# (the deck's line, or --set), for every [burst] key.
deck "$dir/burst_gang.toml" $'[schedule]\nkind = "gang"\n[burst]\nranks = '"$fc_on_1"
expect_error burst_under_gang "burst_gang.toml:8: burst.ranks: only schedule.kind = \"burst\" reads \[burst\] keys, but the schedule is \"gang\"" \
  mpiexec -n 2 "$WAVETRAIN" "$dir/burst_gang.toml" --run-dir "$dir/burst_gang"
deck "$dir/plain.toml" ""
expect_error burst_amp_under_waves "command line: burst.amp_limit: only schedule.kind = \"burst\" reads" \
  mpiexec -n 2 "$WAVETRAIN" "$dir/plain.toml" --set schedule.kind=waves --set burst.amp_limit=3 \
  --run-dir "$dir/burst_amp"
# A measured profile of another model (mlp's, from a burst run that planned on it) is refused.
"$WAVETRAIN" "$WT_SOURCE_DIR/inputs/fashion_mlp.toml" --set "data.path=\"$data\"" \
  --set schedule.kind=burst --set train.eval_every_epoch=false --steps 1 --run-dir "$dir/mlp_run" \
  >/dev/null 2>&1 || fail "the mlp run that measures a profile failed"
[[ -f "$dir/mlp_run/profile.h5" ]] || fail "burst planning wrote no profile.h5"
deck "$dir/burst_plan.toml" $'[schedule]\nkind = "burst"'
expect_error burst_profile "profile.h5: --profile" \
  "$WAVETRAIN" "$dir/burst_plan.toml" --show-plan --ranks 2 --device a100 \
  --profile "$dir/mlp_run/profile.h5"

# ScaleDNN's keys: a master where the schedule has none, a codec where no master broadcasts, an
# unknown codec, a negative size.
deck "$dir/master_waves.toml" $'[schedule]\nkind = "waves"\ngang_sync = "master"'
expect_error master_waves "master_waves.toml:7: schedule.gang_sync" \
  "$WAVETRAIN" "$dir/master_waves.toml" --run-dir "$dir/master_waves"
deck "$dir/codec_pipeline.toml" $'[schedule]\nkind = "pipeline"\n[compress]\nweights = "scalednn"'
expect_error codec_pipeline "codec_pipeline.toml:8: compress.weights: \"scalednn\" compresses the weights a master broadcasts" \
  "$WAVETRAIN" "$dir/codec_pipeline.toml" --run-dir "$dir/codec_pipeline"
deck "$dir/codec_name.toml" $'[compress]\nweights = "fp8"'
expect_error codec_name "codec_name.toml:6: compress.weights" \
  "$WAVETRAIN" "$dir/codec_name.toml" --run-dir "$dir/codec_name"
deck "$dir/codec_bytes.toml" $'[compress]\nmin_bytes = -1'
expect_error codec_bytes "codec_bytes.toml:6: compress.min_bytes" \
  "$WAVETRAIN" "$dir/codec_bytes.toml" --run-dir "$dir/codec_bytes"
deck "$dir/scatter_waves.toml" $'[schedule]\nkind = "waves"'
expect_error scatter_waves "command line: data.distribution: scatter splits a global batch" \
  "$WAVETRAIN" "$dir/scatter_waves.toml" --set data.distribution=scatter --run-dir "$dir/scatter_waves"

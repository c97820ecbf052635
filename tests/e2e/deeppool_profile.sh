#!/usr/bin/env bash
# DeepPool's profile format into wavetrain (issue 22): tools/deeppool_prof_to_profile.py converts
# a .prof file (here one this test writes for models/mlp.toml, with times chosen by hand) into
# profile.h5, and --show-plan prices it under both burst cost models with figures worked out by
# hand. Bad .prof files and missing layers stop the converter with exit status 2 naming the line
# or the key; a bad burst.cost_model stops wavetrain with exit status 2 naming the key.
source "$(dirname "$0")/lib/common.bash"
python=${WT_PYTHON:-/usr/bin/python3}
"$python" -c "import h5py, numpy" 2>/dev/null || { echo "SKIP: $python lacks h5py/numpy"; exit 77; }
convert="$WT_SOURCE_DIR/tools/deeppool_prof_to_profile.py"
model="$WT_SOURCE_DIR/models/mlp.toml"
data=$(fashion_mnist_h5)

# avg ms at 8 samples per GPU: flatten 0.010, fc1 0.200, relu1 0.020, fc2 0.100, relu2 0.020,
# fc3 0.050 (0.400 in all), proportional to the samples; forward a third, backward two thirds.
"$python" - "$dir/mlp.prof" <<'PY'
import sys
layers = [('flatten{"kernel_size":1}', "[1,28,28]", 0.010),
          ('linear{"bias":true,"in_features":784,"out_features":256}', "784", 0.200),
          ('ReLU1d{"inplace":true,"kernel_size":1,"padding":0,"stride":1}', "256", 0.020),
          ('linear{"bias":true,"in_features":256,"out_features":256}', "256", 0.100),
          ('ReLU1d{"inplace":true,"kernel_size":1,"padding":0,"stride":1}', "256", 0.020),
          ('linear{"bias":true,"in_features":256,"out_features":10}', "256", 0.050)]
with open(sys.argv[1], "w") as f:
    f.write("#config  avg(ms)  fw  bw\n")
    for b in (1, 2, 4, 8):
        for key, dim, ms in layers:
            avg = ms * b / 8
            f.write(f"  {key}[{b}]{dim}  {avg:.6f}  {avg * 1000 / 3:.3f}  {avg * 2000 / 3:.3f}\n")
        f.write("  SUM(avg)  0\n")
PY
"$python" "$convert" "$dir/mlp.prof" "$model" -o "$dir/mlp.h5" | grep -q "7 nodes of mlp" ||
  fail "converter output"
# A slow link makes sync visible: 40 us a message, 1 GB/s.
cat > "$dir/link.toml" <<'TOML'
base = "a100"
name = "slow-link"
ranks_per_node = 2
intra_alpha_s = 40e-6
intra_bytes_per_s = 1e9
inter_alpha_s = 40e-6
inter_bytes_per_s = 1e9
TOML
plan() {  # ranks cost_model
  "$WAVETRAIN" "$WT_SOURCE_DIR/inputs/fashion_mlp.toml" --set "data.path=\"$data\"" \
    --set train.global_batch=8 --set burst.amp_limit=99 --show-plan --ranks "$1" \
    --device "$dir/link.toml" --profile "$dir/mlp.h5" --set "burst.cost_model=$2"
}
plan 1 deeppool > "$dir/one.txt"
grep -q "^predicted step 0.400 ms" "$dir/one.txt" || { cat "$dir/one.txt"; fail "one rank: not 0.400 ms"; }
plan 2 deeppool > "$dir/deeppool.txt"
cat "$dir/deeppool.txt"
# Moving 4 rows to another rank costs 2 x 40 us alone: everything stays on rank 0. Data parallel
# on 2: 0.200 ms of compute and DeepPool's sync, the gradients' bytes / beta: (803,840 + 263,168 +
# 10,280) bytes at 1 GB/s = 1.077 ms.
grep -q "^segments: \[0..6\] on 1" "$dir/deeppool.txt" || fail "deeppool plan"
grep -q "^data parallel on 2 ranks: 1.277 ms" "$dir/deeppool.txt" || fail "deeppool DP price"
# The executor's: one 4 MiB bucket after backward, a ring on 2 ranks: 2 x 40 us + 1.077 ms.
plan 2 executor > "$dir/executor.txt"
grep -q "^data parallel on 2 ranks: 1.357 ms" "$dir/executor.txt" ||
  { cat "$dir/executor.txt"; fail "executor DP price"; }

expect_converter() {  # name pattern args...
  local name=$1 pattern=$2
  shift 2
  set +e
  "$python" "$convert" "$@" -o "$dir/bad.h5" 2>"$dir/$name.err"
  local rc=$?
  set -e
  [[ $rc == 2 ]] || { cat "$dir/$name.err"; fail "$name: exit status $rc, expected 2"; }
  grep -q -- "$pattern" "$dir/$name.err" || { cat "$dir/$name.err"; fail "$name: no '$pattern'"; }
  echo "ok $name: $(head -1 "$dir/$name.err")"
}
"$python" "$convert" --help | grep -q "relu-inplace" || fail "--help"
expect_converter missing_file "cannot read" "$dir/none.prof" "$model"
sed '3s/ [0-9.]*$//' "$dir/mlp.prof" | sed '3s/ [0-9.]*$//' > "$dir/short.prof"
expect_converter short_line "short.prof:3:" "$dir/short.prof" "$model"
grep -v '"out_features":10}\[4\]' "$dir/mlp.prof" > "$dir/gap.prof"
expect_converter missing_layer "node 'fc3' (linear) at batch 4" "$dir/gap.prof" "$model"
expect_converter inplace_false 'inplace":false' "$dir/mlp.prof" "$model" --relu-inplace false
"$python" "$convert" "$dir/gap.prof" "$model" -o "$dir/gap.h5" --missing 1us >/dev/null ||
  fail "--missing 1us should price the gap"

set +e
plan 2 paper 2> "$dir/bad_model.err" >/dev/null
rc=$?
set -e
[[ $rc == 2 ]] || fail "bad burst.cost_model: exit status $rc, expected 2"
grep -q "burst.cost_model" "$dir/bad_model.err" || fail "bad burst.cost_model: key not named"
echo "PASS"

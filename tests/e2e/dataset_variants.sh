#!/usr/bin/env bash
# docs/dataset-format.md is a contract: every variant it documents is written here with h5py, as
# a user would write it, and --check-data accepts it (with the read path the page promises) and a
# run trains one step on it. The variants it refuses (float64 inputs, an lzf-compressed file) are
# refused by --check-data and by the run with the same message.
source "$(dirname "$0")/lib/common.bash"
PY=${WT_PYTHON:-/usr/bin/python3}
cd "$dir"
cp "$WT_SOURCE_DIR/models/own_data_cnn.toml" cnn.toml  # input [1, 16, 16], 3 classes
cat >tokens.toml <<'EOF'
[model]
name = "tokens"
input = [8]
classes = 5
[[layer]]
name = "emb"
type = "embedding"
vocab = 5
dim = 6
[[layer]]
name = "out"
type = "linear"
out_features = 5
[[layer]]
name = "loss"
type = "token_softmax_xent"
EOF
deck() {  # name model
  sed -e "s|^file = .*|file = \"$2\"|" -e "s|^global_batch = .*|global_batch = 16|" \
    "$WT_SOURCE_DIR/inputs/own_data_example.toml" >"$1"
}
deck images.toml cnn.toml
deck text.toml tokens.toml

"$PY" - <<'PY'
import h5py, numpy as np
rng = np.random.default_rng(5)

def write(name, inputs=np.uint8, labels=np.int32, shape=(1, 16, 16), n=(64, 16), attrs=True,
          fixed_strings=False, token=False, **storage):
    with h5py.File(name + ".h5", "w") as f:
        for split, rows in zip(("train", "test"), n):
            g = f.create_group(split)
            if token:
                x = rng.integers(0, 5, (rows,) + shape, dtype=np.uint8)
                y = rng.integers(0, 5, (rows,) + shape)
            else:
                x = (rng.integers(0, 256, (rows,) + shape).astype(inputs) if np.dtype(inputs).kind == "u"
                     else rng.random((rows,) + shape).astype(inputs))
                y = rng.integers(0, 3, rows)
            g.create_dataset("inputs", data=x, **({} if rows == 0 else storage))
            g.create_dataset("labels", data=y.astype(labels))
        if attrs:
            f.attrs["num_classes"] = 5 if token else 3
            names = ["a", "b", "c", "d", "e"] if token else ["circle", "square", "cross"]
            f.attrs["class_names"] = np.array(names, dtype="S8") if fixed_strings else names
            f.attrs["mean"], f.attrs["std"] = (0.0, 1.0) if token else (0.5, 0.29)
            f.attrs["source"] = np.bytes_(b"fixed source") if fixed_strings else "variants test"
        if token:
            f.attrs["token_ids"] = 1

write("u8_contiguous")
write("u8_chunked", chunks=(8, 1, 16, 16))
write("u8_chunks_split_samples", chunks=(8, 1, 8, 16))
write("u8_gzip", chunks=(8, 1, 16, 16), compression="gzip")
write("u8_gzip_shuffle", chunks=(8, 1, 16, 16), compression="gzip", shuffle=True)
write("f32_contiguous", inputs=np.float32)
write("f32_chunked", inputs=np.float32, chunks=(16, 1, 16, 16))
write("f32_big_endian", inputs=">f4")
write("f32_gzip", inputs=np.float32, chunks=(16, 1, 16, 16), compression="gzip")
write("labels_int64", labels=np.int64)
write("labels_uint8", labels=np.uint8)
write("fixed_length_strings", fixed_strings=True)
write("no_attributes", attrs=False)
write("empty_test_split", n=(64, 0))
write("per_token_labels", shape=(8,), token=True)
write("per_token_labels_chunked", shape=(8,), token=True, chunks=(16, 8))
# Normalisation arrays: one mean and std per element (float32) or per channel (uint8, [C] = [1]),
# and arrays of mean with a single std.
def scaling(name, mean, std):
    with h5py.File(name + ".h5", "a") as f:
        f.attrs["mean"], f.attrs["std"] = np.asarray(mean), np.asarray(std)

write("per_element_scaling", inputs=np.float32)
scaling("per_element_scaling", rng.random(256), 0.2 + rng.random(256))
write("per_channel_scaling")
scaling("per_channel_scaling", [0.5], [0.29])
write("per_element_mean_one_std")
scaling("per_element_mean_one_std", rng.random(256), 0.3)
# Refused variants.
write("std_array_zero", inputs=np.float32)
scaling("std_array_zero", np.zeros(256), np.r_[np.ones(7), 0.0, np.ones(248)])
write("mean_wrong_length")
scaling("mean_wrong_length", np.zeros(16), 1.0)
write("f64_inputs", inputs=np.float64)
write("lzf", chunks=(8, 1, 16, 16), compression="lzf")
PY

variant() {  # file deck read-path-pattern
  "$WAVETRAIN" --check-data "$1.h5" --deck "$2" >"$1.check" 2>&1 ||
    { cat "$1.check"; fail "$1: --check-data refused a documented variant"; }
  grep -qE "$3" "$1.check" || { cat "$1.check"; fail "$1: read path is not '$3'"; }
  timeout 120 "$WAVETRAIN" "$2" --set "data.path=\"$dir/$1.h5\"" --steps 1 --run-dir "run_$1" \
    >"$1.run" 2>&1 || { cat "$1.run"; fail "$1: a run refused a documented variant"; }
  grep -q "done: 1 steps" "$1.run" || { cat "$1.run"; fail "$1: no step"; }
  echo "ok $1: $(grep -m1 "reads:" "$1.check" | sed 's/^ *//')"
}
variant u8_contiguous images.toml "reads: direct"
variant u8_chunked images.toml "reads: direct"
variant u8_chunks_split_samples images.toml "reads: through HDF5 \(chunks split samples"
variant u8_gzip images.toml "reads: through HDF5 \(dataset is filtered"
variant u8_gzip_shuffle images.toml "reads: through HDF5 \(dataset is filtered"
variant f32_contiguous images.toml "reads: direct"
variant f32_chunked images.toml "reads: direct"
variant f32_big_endian images.toml "reads: through HDF5 \(element type is not native"
variant f32_gzip images.toml "reads: through HDF5"
variant labels_int64 images.toml "reads: direct"
variant labels_uint8 images.toml "reads: direct"
variant fixed_length_strings images.toml "3 classes: circle, square, cross"
variant no_attributes images.toml "reads: direct"
variant empty_test_split images.toml "^/test: 0 samples"
variant per_element_scaling images.toml "normalisation per feature \(256 features\)"
variant per_channel_scaling images.toml "normalisation mean 0.5 std 0.29"
variant per_element_mean_one_std images.toml "normalisation per feature \(256 features\): mean [0-9.e-]+\.\.[0-9.]+, std 0.3$"
variant per_token_labels text.toml "labels \[N, 8\] int32 \(per token\)"
variant per_token_labels_chunked text.toml "reads: direct"
# The ten-line example of docs/dataset-format.md, run as printed there.
mkdir -p data
sed -n '/^```python$/,/^```$/p' "$WT_SOURCE_DIR/docs/dataset-format.md" | sed '1d;$d' >doc_example.py
"$PY" doc_example.py || fail "the documented example does not run"
mv data/own_data.h5 doc_example.h5
variant doc_example images.toml "reads: direct"
grep -q "data .*fixed_length_strings.h5: 64 training, 16 test samples, 3 classes: circle, square, cross" \
  run_fixed_length_strings/log.txt || fail "the run does not print the file's class names"

refused() {  # file pattern: --check-data and the run both exit 2 with the same message
  set +e
  "$WAVETRAIN" --check-data "$dir/$1.h5" --deck images.toml >/dev/null 2>"$1.check"
  local check=$?
  timeout 120 "$WAVETRAIN" images.toml --set "data.path=\"$dir/$1.h5\"" --steps 1 --run-dir "run_$1" \
    >/dev/null 2>"$1.run"
  local run=$?
  set -e
  [[ $check == 2 && $run == 2 ]] || fail "$1: exit status $check (check) / $run (run), expected 2"
  grep -qE "$2" "$1.check" || { cat "$1.check"; fail "$1: message lacks '$2'"; }
  diff "$1.check" "$1.run" || fail "$1: --check-data and the run say different things"
  echo "ok $1 refused: $(cat "$1.check")"
}
refused std_array_zero "std_array_zero.h5: std: normalisation std \(value 7\) must be > 0, found 0$"
refused mean_wrong_length "mean_wrong_length.h5: mean: 16 values for samples of shape \[1, 16, 16\]: give one number, one per channel \(1\) or one per element \(256\)"
refused f64_inputs "f64_inputs.h5: /train/inputs: element type must be uint8 or float32"
refused lzf "lzf.h5: /train/inputs: compressed with filter 32000 \(lzf\), which this HDF5 library cannot decode"

# A token id outside the model's vocabulary (9 in a file whose inputs the model reads as ids in
# [0, 5)): found on the device and read back with the step's results (no synchronisation per
# embedding), exit 2 naming the file, the step, the position and the value, on every device.
"$PY" - <<'PY'
import h5py, numpy as np
with h5py.File("bad_token.h5", "w") as f:
    for split, rows in (("train", 64), ("test", 16)):
        x = np.zeros((rows, 8), np.uint8)
        x[3, 5] = 9  # sample 3, position 5: row 29 of a batch's ids
        f.create_dataset(split + "/inputs", data=x)
        f.create_dataset(split + "/labels", data=np.zeros((rows, 8), np.int32))
    f.attrs["num_classes"], f.attrs["token_ids"] = 5, 1
PY
for device in host strict; do
  set +e
  timeout 120 "$WAVETRAIN" text.toml --set "data.path=\"$dir/bad_token.h5\"" --set data.shuffle=false \
    --set "device.kind=\"$device\"" --steps 2 --run-dir "run_bad_token_$device" >"bad_token_$device.run" 2>&1
  status=$?
  set -e
  [[ $status == 2 ]] || { cat "bad_token_$device.run"; fail "bad token on $device: exit $status, expected 2"; }
  grep -q "bad_token.h5: step 0: embedding input 9.000000 at position 29 is not a token id in \[0, 5)" \
    "bad_token_$device.run" || { cat "bad_token_$device.run"; fail "bad token on $device: message"; }
  echo "ok bad token on $device: $(grep -m1 'not a token id' "bad_token_$device.run")"
done
echo "dataset_variants: every documented variant trains"

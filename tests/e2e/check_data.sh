#!/usr/bin/env bash
# wavetrain --check-data FILE [--deck DECK] (issue 23): a good file prints its splits, counts,
# shapes, dtypes, class balance and value ranges and exits 0; each bad file exits 2 with one
# message naming the file, the dataset and the reason, the very message a run gives for it
# (compared line for line), plus what only a full read finds (non-finite inputs).
source "$(dirname "$0")/lib/common.bash"
PY=${WT_PYTHON:-/usr/bin/python3}
cd "$dir"
cp "$WT_SOURCE_DIR/models/own_data_cnn.toml" cnn.toml  # input [1, 16, 16], 3 classes
sed -e "s|^file = .*|file = \"cnn.toml\"|" -e "s|^global_batch = .*|global_batch = 16|" \
  "$WT_SOURCE_DIR/inputs/own_data_example.toml" >deck.toml

"$PY" - <<'PY'
import h5py, numpy as np
rng = np.random.default_rng(7)

def write(name, shape=(1, 16, 16), classes=3, labels=None, inputs=None, n=64, attrs=True):
    with h5py.File(name + ".h5", "w") as f:
        for split, rows in (("train", n), ("test", 20)):
            g = f.create_group(split)
            x = rng.integers(0, 256, (rows,) + shape, dtype=np.uint8) if inputs is None else inputs(rows)
            g.create_dataset("inputs", data=x)
            y = np.arange(rows) % 3 if labels is None else labels(rows)
            g.create_dataset("labels", data=y.astype(np.int32))
        f.attrs["num_classes"] = classes
        f.attrs["class_names"] = ["circle", "square", "cross", "star"][:classes]

def with_value(value, row, element):
    def make(rows):
        x = rng.random((rows, 1, 16, 16)).astype(np.float32)
        if rows > row:
            x[row].flat[element] = value
        return x
    return make

write("good")
write("label_too_big", labels=lambda rows: np.where(np.arange(rows) == 7, 3, np.arange(rows) % 3))
write("nan_input", inputs=with_value(np.nan, 5, 17))
write("inf_input", inputs=with_value(np.inf, 9, 0))
write("test_nan_input", inputs=lambda rows: rng.random((rows, 1, 16, 16)).astype(np.float32))
with h5py.File("test_nan_input.h5", "a") as f:  # in the test split only
    x = f["test/inputs"][...]
    x[4].flat[3] = np.nan
    f["test/inputs"][...] = x
write("wrong_shape", shape=(1, 12, 12))
write("four_classes", classes=4)
write("few_samples", n=8)
write("token_labels", labels=lambda rows: np.zeros((rows, 16), dtype=np.int32))
write("names_mismatch")
with h5py.File("names_mismatch.h5", "a") as f:
    f.attrs["class_names"] = ["circle", "square"]
with open("not_hdf5.h5", "w") as f:
    f.write("not a dataset\n")
with h5py.File("no_test.h5", "w") as f:
    f.create_group("train")
PY

"$WAVETRAIN" --check-data good.h5 >good.out || { cat good.out; fail "good file: refused"; }
cat good.out
grep -q "^good.h5: 3 classes: circle, square, cross" good.out || fail "good: class names"
grep -q "^/train: 64 samples, inputs 1x16x16 uint8, labels \[N\] int32" good.out || fail "good: train"
grep -q "^  classes: circle=22 square=21 cross=21" good.out || fail "good: balance"
grep -qE "^  values [0-9]+\.\.25[0-9] \(normalised" good.out || fail "good: value range"
grep -q "^/test: 20 samples" good.out || fail "good: test"
grep -q "^ok: a model for this file declares input = \[1, 16, 16\] and classes = 3" good.out || fail "good: hint"
"$WAVETRAIN" --check-data good.h5 --deck deck.toml >good_deck.out || fail "good file with the deck"
grep -q "^ok: matches .*/deck.toml (model 'own_data_cnn', input \[1, 16, 16\], 3 classes" good_deck.out ||
  { cat good_deck.out; fail "good with deck: no match line"; }

# Bad files: exit 2, one line naming file, dataset and reason; with a deck, the run's own message.
bad() {  # name pattern [deck]: --check-data exits 2 with the pattern; with a deck, as the run does
  local name=$1 pattern=$2 deck=${3:-}
  set +e
  if [[ -n $deck ]]; then
    "$WAVETRAIN" --check-data "$dir/$name.h5" --deck "$deck" >"$name.out" 2>"$name.err"
  else
    "$WAVETRAIN" --check-data "$dir/$name.h5" >"$name.out" 2>"$name.err"
  fi
  local rc=$?
  set -e
  [[ $rc == 2 ]] || { cat "$name.out" "$name.err"; fail "$name: exit status $rc, expected 2"; }
  [[ $(wc -l <"$name.err") == 1 ]] || { cat "$name.err"; fail "$name: not one line"; }
  grep -qE -- "$pattern" "$name.err" || { cat "$name.err"; fail "$name: message lacks '$pattern'"; }
  if [[ -n $deck ]]; then
    set +e
    timeout 120 "$WAVETRAIN" "$deck" --set "data.path=\"$dir/$name.h5\"" --steps 1 --run-dir "run_$name" \
      >/dev/null 2>"$name.run"
    rc=$?
    set -e
    [[ $rc == 2 ]] || fail "$name: the run exits $rc, expected 2"
    diff "$name.err" "$name.run" || fail "$name: --check-data and the run say different things"
  fi
  echo "ok $name: $(cat "$name.err")"
}
bad label_too_big "label_too_big.h5: /train/labels: label 3 at row 7 is outside the class range \[0, 3\)" deck.toml
bad label_too_big "label_too_big.h5: /train/labels: label 3 at row 7 is outside the class range \[0, 3\)"
bad nan_input "nan_input.h5: /train/inputs: non-finite value \(NaN\) at row 5, element 17"
bad inf_input "inf_input.h5: /train/inputs: non-finite value \(Inf\) at row 9, element 0"
# A test value is no training value: what it does is what the evaluation does with it.
bad test_nan_input "test_nan_input.h5: /test/inputs: non-finite value \(NaN\) at row 4, element 3 \(after normalisation\): evaluating on it makes the test loss NaN, which stops the run \(exit 4\) unless failure.on_nonfinite = \"skip\""
bad wrong_shape "wrong_shape.h5: /train/inputs: samples have shape \[1, 12, 12\] .* but the model expects \[1, 16, 16\]" deck.toml
bad four_classes "cnn.toml: model.classes: the model has 3 classes, the dataset .*four_classes.h5 has 4" deck.toml
bad few_samples "deck.toml.*train.global_batch: 16 is larger than the training split's 8 samples" deck.toml
bad token_labels "token_labels.h5: /train/labels: has 16 label\(s\) per sample, but the model's loss layer 'loss' needs 1" deck.toml
bad names_mismatch "names_mismatch.h5: class_names: 2 names for num_classes 3: give one name per class" deck.toml
bad not_hdf5 "not_hdf5.h5: not an HDF5 file" deck.toml
bad no_test "no_test.h5: /train/inputs: missing dataset"

set +e
"$WAVETRAIN" deck.toml --deck deck.toml 2>deck_alone.err
rc=$?
set -e
[[ $rc == 2 ]] && grep -q -- "--deck: only applies with --check-data" deck_alone.err ||
  fail "--deck without --check-data: status $rc"
echo "check_data: all cases passed"

#!/usr/bin/env bash
# --evaluate, --predict and tools/export_weights.py on bad input (issue 36): a missing, truncated
# or damaged checkpoint, a deck whose model does not match it, --predict without --data or
# --output, a dataset with the wrong feature count. Each is one message naming the file (and the
# key), exit status 2, and no output file: no evaluation CSV or PNG, no --output, no .npz; the
# same where only the PNG cannot be written (its name taken by a directory).
source "$(dirname "$0")/lib/common.bash"
cd "$dir"
source "$(dirname "${BASH_SOURCE[0]}")/lib/trained_table.bash"

mkdir results  # --evaluate's --run-dir: must stay empty
expect_error() {  # name pattern command...
  local name=$1 pattern=$2; shift 2
  set +e
  timeout 120 "$@" >"$name.out" 2>"$name.err"
  local rc=$?
  set -e
  [[ $rc == 2 ]] || { cat "$name.err"; fail "$name: exit status $rc, expected 2"; }
  [[ $(grep -c "error:" "$name.err") == 1 ]] || { cat "$name.err"; fail "$name: expected one error line"; }
  grep -qF -- "$pattern" "$name.err" || { cat "$name.err"; fail "$name: message lacks '$pattern'"; }
  [[ -z $(ls results) ]] || fail "$name: wrote $(ls results)"
  [[ ! -e out.csv && ! -e out.npz ]] || fail "$name: left an output file"
  ls | grep -q '\.tmp' && fail "$name: left a temporary file"
  echo "ok $name: $(cat "$name.err")"
}

expect_error missing_checkpoint "nope.h5: no such checkpoint file" \
  "$WAVETRAIN" --evaluate nope.h5 --run-dir results
head -c 3000 "$checkpoint" >truncated.h5
expect_error truncated_checkpoint "truncated.h5: cannot open the checkpoint" \
  "$WAVETRAIN" --evaluate truncated.h5 --run-dir results
cp "$checkpoint" damaged.h5
"$PY" -c "import h5py; f = h5py.File('damaged.h5', 'r+'); f['stages/0/values'][5] += 1.0"
expect_error damaged_checkpoint "damaged.h5: /stages/0/values: checksum mismatch" \
  "$WAVETRAIN" --evaluate damaged.h5 --run-dir results
expect_error damaged_checkpoint_predict "damaged.h5: /stages/0/values: checksum mismatch" \
  "$WAVETRAIN" --predict damaged.h5 --data "$table_h5" --output out.csv

# The deck's model differs from the checkpoint's: in size (same name), or in name.
sed 's/out_features = 16/out_features = 8/' mlp.toml >narrow.toml
sed 's|mlp.toml|narrow.toml|' "$deck" >narrow_deck.toml
expect_error other_size "$(basename "$checkpoint"): /stages/0/values: has 131 values, the deck's model needs 67" \
  "$WAVETRAIN" --evaluate "$checkpoint" narrow_deck.toml --run-dir results
sed 's/table_mlp/other_mlp/' mlp.toml >other.toml
sed 's|mlp.toml|other.toml|' "$deck" >other_deck.toml
expect_error other_name "model: the checkpoint is of model 'table_mlp', the deck's model is 'other_mlp'" \
  "$WAVETRAIN" --predict "$checkpoint" --deck other_deck.toml --data "$table_h5" --output out.csv

expect_error predict_no_data "--data: --predict needs the dataset" \
  "$WAVETRAIN" --predict "$checkpoint" --output out.csv
expect_error predict_no_output "--output: --predict needs the file to write" \
  "$WAVETRAIN" --predict "$checkpoint" --data "$table_h5"
expect_error evaluate_no_data_file "nowhere.h5: --data: no such file" \
  "$WAVETRAIN" --evaluate "$checkpoint" --data nowhere.h5 --run-dir results

# The figure's name is taken by a directory: found before the model runs, and no CSV either.
# (A file size limit cannot stand in for a full disk here: Open MPI's start-up needs bigger files.)
stem="evaluation_$(basename "$checkpoint" .h5)"
mkdir -p blocked/"$stem.png"
expect_error png_is_directory "$stem.png: run directory: is not a regular file" \
  "$WAVETRAIN" --evaluate "$checkpoint" --run-dir blocked
[[ $(ls blocked) == "$stem.png" ]] || fail "png_is_directory: wrote $(ls blocked)"

# A dataset of 5 features for the 4-feature model.
"$PY" - <<'PY'
import csv
rows = list(csv.reader(open("table.csv")))
with open("wide.csv", "w", newline="") as f:
    w = csv.writer(f)
    for i, r in enumerate(rows):
        w.writerow(r[:-1] + (["extra"] if i == 0 else [str(i % 7)]) + r[-1:])
PY
"$PY" "$tools/csv_to_hdf5.py" --train wide.csv --label cultivar --output wide.h5 >/dev/null 2>&1
expect_error wrong_features "wide.h5: /test/inputs: samples have shape [5]" \
  "$WAVETRAIN" --evaluate "$checkpoint" --data wide.h5 --run-dir results
expect_error wrong_features_predict "wide.h5: /test/inputs: samples have shape [5]" \
  "$WAVETRAIN" --predict "$checkpoint" --data wide.h5 --output out.csv

# tools/export_weights.py: a damaged file, and a checkpoint without the layout (older files).
expect_error export_truncated "truncated.h5: cannot open it as an HDF5 checkpoint" \
  "$PY" "$tools/export_weights.py" truncated.h5 --output out.npz
cp "$checkpoint" no_layout.h5
"$PY" -c "import h5py; f = h5py.File('no_layout.h5', 'r+'); del f['stages/0/param_layout']"
expect_error export_no_layout "no_layout.h5: /stages/0/param_layout: missing" \
  "$PY" "$tools/export_weights.py" no_layout.h5 --output out.npz

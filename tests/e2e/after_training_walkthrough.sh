#!/usr/bin/env bash
# After training (issue 36), end to end: a CSV with string labels, mixed column scales and an id
# column -> tools/csv_to_hdf5.py -> a trained MLP (lib/trained_table.bash) -> `wavetrain
# --evaluate` (printed, CSV and its own PNG; redrawn by analysis/confusion.py) -> `--predict` ->
# tools/export_weights.py -> a NumPy forward pass here, written from the documented formats alone
# (the dataset's mean/std attributes, the exported layer shapes), which must get exactly the
# accuracy --evaluate printed. Where PyTorch is installed, tools/torch_from_export.py must too.
source "$(dirname "$0")/lib/common.bash"
cd "$dir"
source "$(dirname "${BASH_SOURCE[0]}")/lib/trained_table.bash"

"$WAVETRAIN" --evaluate "$checkpoint" | tee evaluate.out
line=$(grep -E "^test loss [0-9.]+, accuracy [0-9.]+ \([0-9]+ of [0-9]+\)$" evaluate.out) ||
  fail "--evaluate printed no loss and accuracy line"
accuracy=$(sed -E 's/.*accuracy ([0-9.]+) .*/\1/' <<<"$line")
correct=$(sed -E 's/.*\(([0-9]+) of ([0-9]+)\)/\1/' <<<"$line")
samples=$(sed -E 's/.*\(([0-9]+) of ([0-9]+)\)/\2/' <<<"$line")
held_out=$(sed -nE 's|^  /test: ([0-9]+) samples.*|\1|p' convert.out)
[[ $samples == "$held_out" ]] || fail "--evaluate saw $samples test samples, the converter held out $held_out"
# The run's own last evaluation of the same weights on the same split (metrics.csv: 6 digits).
trained=$(last_metric "$run/metrics.csv" eval accuracy)
[[ $accuracy == "$trained" ]] || fail "--evaluate accuracy $accuracy, the run's last test accuracy $trained"
for class in barbera barolo grignolino; do
  grep -qE "^$class +[0-9.]+ +[0-9.]+ +[0-9]+$" evaluate.out || fail "no precision/recall row for $class"
done
grep -q "^confusion matrix" evaluate.out || fail "no confusion matrix"
report="$run/evaluation_$(basename "$checkpoint" .h5).csv"
[[ -f $report ]] || fail "--evaluate did not write $report"
"$PY" - "$report" "$correct" "$samples" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
counts = {(r["true_class"], r["predicted_class"]): int(r["value"]) for r in rows if r["quantity"] == "count"}
assert len(counts) == 9, counts
assert sum(counts.values()) == int(sys.argv[3]), "the confusion matrix does not sum to the samples"
diagonal = sum(v for (t, p), v in counts.items() if t == p)
assert diagonal == int(sys.argv[2]), f"diagonal {diagonal}, printed {sys.argv[2]} correct"
PY
# The PNG beside the CSV, as matplotlib reads it: 3 classes in 160-pixel cells (546x572), each
# cell's corner shaded by its count over its row (app/confusion_png.cpp's "Blues" ramp).
figure="${report%.csv}.png"
grep -qF "wrote $report and $figure" evaluate.out || fail "--evaluate did not name $figure"
"$PY" - "$report" "$figure" <<'PY'
import csv, sys
import matplotlib.image
import numpy as np
rows = list(csv.DictReader(open(sys.argv[1])))
classes = [r["true_class"] for r in rows if r["quantity"] == "precision"]
counts = {(r["true_class"], r["predicted_class"]): int(r["value"]) for r in rows if r["quantity"] == "count"}
image = matplotlib.image.imread(sys.argv[2])  # floats 0 to 1 for a PNG
assert image.shape == (572, 546, 3), image.shape
pixels = np.rint(image * 255).astype(int)
stops = np.array([[247, 251, 255], [107, 174, 214], [8, 48, 107]])
def shade(share):
    at = min(max(share, 0.0), 1.0) * 2
    i = min(int(at), 1)
    return np.floor(stops[i] + (stops[i + 1] - stops[i]) * (at - i) + 0.5).astype(int)
left, top, cell = 54, 38, 160  # the matrix's corner and cell size for 3 classes
for t, true in enumerate(classes):
    total = sum(counts[true, p] for p in classes)
    for p, predicted in enumerate(classes):
        got = pixels[top + t * cell + 2, left + p * cell + 2]
        want = shade(counts[true, predicted] / total)
        assert (got == want).all(), f"cell ({t}, {p}): {got}, expected {want}"
print(f"{sys.argv[2]}: {image.shape[1]}x{image.shape[0]}, every cell shaded by its row share")
PY
"$PY" "$WT_SOURCE_DIR/analysis/confusion.py" "$report"
[[ -s $figure ]] || fail "analysis/confusion.py wrote no PNG"

"$WAVETRAIN" --predict "$checkpoint" --data "$table_h5" --output predictions.csv | tee predict.out
"$PY" - predictions.csv "$correct" "$samples" <<'PY'
import sys
import numpy as np
header = open(sys.argv[1]).readline().strip().split(",")
assert header == ["row", "label", "predicted", "p_barbera", "p_barolo", "p_grignolino"], header
a = np.loadtxt(sys.argv[1], delimiter=",", skiprows=1)
assert len(a) == int(sys.argv[3]), len(a)
p = a[:, 3:]
assert np.allclose(p.sum(axis=1), 1, atol=1e-5), "probabilities do not sum to 1"
assert (p.argmax(axis=1) == a[:, 2]).all(), "predicted is not the most probable class"
assert int((a[:, 1] == a[:, 2]).sum()) == int(sys.argv[2]), "--predict and --evaluate disagree"
PY

"$PY" "$WT_SOURCE_DIR/tools/export_weights.py" "$checkpoint" --output weights.npz | tee export.out
"$PY" - weights.npz "$table_h5" "$correct" <<'PY'
import sys
import h5py
import numpy as np
w = np.load(sys.argv[1])
assert list(w.files) == ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"], w.files
assert w["fc1.weight"].shape == (16, 4) and w["fc2.weight"].shape == (3, 16)
with h5py.File(sys.argv[2]) as f:  # docs/dataset-format.md: (x - mean) / std, per feature
    x = (f["test/inputs"][()] - f.attrs["mean"]) / f.attrs["std"]
    y = f["test/labels"][()]
h = np.maximum(x @ w["fc1.weight"].T + w["fc1.bias"], 0)
logits = h @ w["fc2.weight"].T + w["fc2.bias"]
correct = int((logits.argmax(axis=1) == y).sum())
print(f"NumPy forward pass: {correct} of {len(y)} correct")
assert correct == int(sys.argv[3]), f"NumPy {correct}, --evaluate {sys.argv[3]}"
PY

if "$PY" -c "import torch" 2>/dev/null; then
  "$PY" "$WT_SOURCE_DIR/tools/torch_from_export.py" mlp.toml weights.npz "$table_h5" | tee torch.out
  grep -q "^test accuracy $accuracy ($correct of $samples)$" torch.out || fail "PyTorch: not $accuracy"
else
  echo "no PyTorch here: tools/torch_from_export.py not run"
fi
echo "after_training_walkthrough: test accuracy $accuracy ($correct of $samples) in wavetrain, NumPy and PyTorch"

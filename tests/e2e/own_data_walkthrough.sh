#!/usr/bin/env bash
# The "Bring your own data" walk-through (docs/own-data.md), end to end (issue 23): a folder of PNG images,
# one subfolder per class, converted with tools/images_to_hdf5.py, checked with --check-data
# (alone, then against inputs/own_data_example.toml), trained on 2 ranks with the template deck
# and its model, and drawn with analysis/curves.py. The images are easy to tell apart (a bright
# bar at a class's own place on noise), so the model must learn them: test accuracy well above
# chance (1/3) after 10 epochs.
source "$(dirname "$0")/lib/common.bash"
PY=${WT_PYTHON:-/usr/bin/python3}
cd "$dir"
"$PY" - <<'PY'
import os
import numpy as np
from PIL import Image
rng = np.random.default_rng(11)
for c, name in enumerate(["circle", "cross", "square"]):
    os.makedirs(f"photos/{name}")
    for i in range(300):
        a = rng.integers(0, 160, (16, 16))
        row = 3 + 4 * c + rng.integers(-1, 2)  # a faint bar, its place jittered, on strong noise
        a[row:row + 2, 2:14] += rng.integers(30, 90)
        a = np.clip(a, 0, 255).astype(np.uint8)
        Image.fromarray(a).save(f"photos/{name}/{i:03d}.png")
PY
mkdir -p data
"$PY" "$WT_SOURCE_DIR/tools/images_to_hdf5.py" --input photos --output data/own_data.h5 | tee convert.out
grep -q "^  /train: 720 samples of 1x16x16 uint8" convert.out || fail "convert: train count"
"$WAVETRAIN" --check-data data/own_data.h5 | tee check.out
grep -q "declares input = \[1, 16, 16\] and classes = 3" check.out || fail "check: hint"
# The template as a user copies it: the deck and its model side by side, paths relative to them.
mkdir inputs models
cp "$WT_SOURCE_DIR/inputs/own_data_example.toml" inputs/
cp "$WT_SOURCE_DIR/models/own_data_cnn.toml" models/
"$WAVETRAIN" --check-data data/own_data.h5 --deck inputs/own_data_example.toml | tee check_deck.out
grep -q "^ok: matches" check_deck.out || fail "check against the deck"
timeout 300 mpiexec -n 2 --oversubscribe "$WAVETRAIN" inputs/own_data_example.toml --set train.epochs=10 \
  | tee train.out
grep -q "data .*own_data.h5: 720 training, 180 test samples, 3 classes: circle, cross, square" train.out ||
  fail "the run does not print the classes"
acc=$(last_metric runs/own_data/metrics.csv eval accuracy)
[[ -n $acc ]] || { head -3 runs/own_data/metrics.csv; fail "no test accuracy"; }
awk -v a="$acc" 'BEGIN { exit !(a >= 0.8) }' || fail "test accuracy $acc after 10 epochs, expected >= 0.8"
"$PY" "$WT_SOURCE_DIR/analysis/curves.py" runs/own_data | tee curves.out
[[ -s runs/own_data/curves.png ]] || fail "no curves.png"
echo "own_data_walkthrough: test accuracy $acc"

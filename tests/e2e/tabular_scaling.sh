#!/usr/bin/env bash
# Per-feature scaling of a badly scaled table (issue 36), end to end: a CSV whose class lies in two
# columns of spread 0.001 and 0.004 beside two noise columns of spread 500 and 800. Converted with
# --scale global, the one mean and std leave the small columns all but constant: the model cannot
# see the class (near chance, 1/3). With per-feature scaling (the CSV default) each column is
# standardised and the same model and deck learn it. --check-data reports each file's scaling.
# No timing is asserted: the two runs compare accuracies only.
source "$(dirname "$0")/lib/common.bash"
PY=${WT_PYTHON:-/usr/bin/python3}
cd "$dir"
"$PY" - <<'PY'
import numpy as np
rng = np.random.default_rng(36)
n = 900
y = np.arange(n) % 3
rng.shuffle(y)
cols = [0.002 * y + rng.normal(0, 0.001, n), 0.01 * y + rng.normal(0, 0.004, n),
        rng.normal(1000, 500, n), rng.normal(2000, 800, n)]
with open("table.csv", "w") as f:
    f.write("acidity,ash,magnesium,proline,cultivar\n")
    for i in range(n):
        f.write(",".join(f"{c[i]:.6g}" for c in cols) + f",{y[i]}\n")
PY
source "$(dirname "$0")/lib/table_mlp.bash"
table_mlp_model mlp.toml table_mlp 4 3 32
table_mlp_deck deck.toml mlp.toml 15

tools="$WT_SOURCE_DIR/tools"
"$PY" "$tools/csv_to_hdf5.py" --train table.csv --label cultivar --output per_feature.h5 \
  >per_feature.out 2>per_feature.err || { cat per_feature.err; fail "per-feature conversion"; }
! grep -q warning per_feature.err || { cat per_feature.err; fail "per-feature: a warning"; }
grep -q "normalisation per feature (4 features): mean" per_feature.out || { cat per_feature.out; fail "summary"; }
"$PY" "$tools/csv_to_hdf5.py" --train table.csv --label cultivar --output global.h5 --scale global \
  >global.out 2>global.err || { cat global.err; fail "global conversion"; }
grep -q "warning: table.csv: the features' spreads differ by a factor of .* of 'acidity' .. .* of 'proline'); with --scale global" global.err ||
  { cat global.err; fail "global: no warning about the spreads"; }

"$WAVETRAIN" --check-data per_feature.h5 --deck deck.toml | tee per_feature.check
grep -qE "^per_feature.h5: 3 classes, normalisation per feature \(4 features\): mean [0-9.e-]+\.\.[0-9.]+, std [0-9.e-]+\.\.[0-9.]+$" per_feature.check ||
  fail "--check-data does not report the per-feature scaling"
grep -qE "^  values -?[0-9.e-]+\.\.[0-9]{4}" per_feature.check || fail "--check-data: values not in the file's units"
"$WAVETRAIN" --check-data global.h5 | tee global.check
grep -qE "^global.h5: 3 classes, normalisation mean [0-9.]+ std [0-9.]+$" global.check ||
  fail "--check-data does not report the global scaling"

accuracy() {  # file: the final test accuracy of the deck's run on it
  "$WAVETRAIN" deck.toml --set "data.path=\"$dir/$1\"" --run-dir "$dir/run_$1" >"run_$1.out" ||
    { cat "run_$1.out"; fail "training on $1"; }
  last_metric "run_$1/metrics.csv" eval accuracy
}
per=$(accuracy per_feature.h5)
one=$(accuracy global.h5)
echo "test accuracy: per-feature scaling $per, global scaling $one"
awk -v a="$per" 'BEGIN { exit !(a >= 0.8) }' || fail "per-feature scaling: accuracy $per, expected >= 0.8"
awk -v a="$per" -v b="$one" 'BEGIN { exit !(a >= b + 0.3) }' ||
  fail "per-feature scaling ($per) not clearly above global scaling ($one)"

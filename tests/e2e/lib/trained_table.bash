# A small classifier trained from a CSV as a user has one (issue 36): string class labels, an id
# column, feature columns of very different scales (0.001 to 1000s). Converted with
# tools/csv_to_hdf5.py's defaults (per-feature scaling, the id dropped, names sorted into classes)
# and trained by an MLP deck on one rank. Sourced after common.bash, in "$dir"; sets
#   table_h5    the converted dataset      deck       the deck (mlp.toml its model)
#   run         the run directory          checkpoint the run's final checkpoint
PY=${WT_PYTHON:-/usr/bin/python3}
tools="$WT_SOURCE_DIR/tools"
"$PY" - <<'PY'
import numpy as np
rng = np.random.default_rng(36)
n = 600
names = np.array(["barolo", "grignolino", "barbera"])
y = np.arange(n) % 3
rng.shuffle(y)
cols = [0.002 * y + rng.normal(0, 0.001, n), 0.01 * y + rng.normal(0, 0.004, n),
        rng.normal(1000, 500, n) + 300 * (y == 1), rng.normal(2000, 800, n)]
with open("table.csv", "w") as f:
    f.write("id,acidity,ash,magnesium,proline,cultivar\n")
    for i in range(n):
        f.write(f"{i}," + ",".join(f"{c[i]:.6g}" for c in cols) + f",{names[y[i]]}\n")
PY
table_h5="$dir/table.h5"
"$PY" "$tools/csv_to_hdf5.py" --train table.csv --label cultivar --output "$table_h5" \
  >convert.out 2>convert.err || { cat convert.err; fail "csv_to_hdf5.py"; }
grep -q "column 'id' dropped" convert.err || { cat convert.err; fail "the id column was not dropped"; }
grep -q "classes: barbera=" convert.out || { cat convert.out; fail "the string labels are not classes"; }
source "$(dirname "${BASH_SOURCE[0]}")/table_mlp.bash"
table_mlp_model mlp.toml table_mlp 4 3 16
deck="$dir/deck.toml"
table_mlp_deck "$deck" mlp.toml 10 table.h5
run="$dir/run"
"$WAVETRAIN" "$deck" --run-dir "$run" --quiet >train.out 2>&1 || { cat train.out; fail "training"; }
checkpoint="$run/checkpoints/$(cat "$run/checkpoints/latest")"
[[ -f $checkpoint ]] || fail "no checkpoint after training: $checkpoint"

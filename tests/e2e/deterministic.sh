#!/usr/bin/env bash
# A deck with a seed gives the same losses on every run (bitwise: losses are printed with 17 significant digits in
# metrics.csv), on 1 rank and on 2 ranks; a different seed gives different losses.
source "$(dirname "$0")/lib/common.bash"
data=$(fashion_mnist_h5)
run() {  # name ranks seed
  mpiexec -n "$2" --oversubscribe "$WAVETRAIN" "$WT_SOURCE_DIR/inputs/fashion_mlp.toml" --quiet \
    --set "data.path=\"$data\"" --set train.log_every_steps=10 --set "run.seed=$3" \
    --set train.eval_every_epoch=false --steps 80 --run-dir "$dir/$1" >/dev/null
  awk -F, '$1=="train" { print $2, $4 }' "$dir/$1/metrics.csv"
}
for ranks in 1 2; do
  a=$(run a$ranks "$ranks" 7)
  b=$(run b$ranks "$ranks" 7)
  c=$(run c$ranks "$ranks" 8)
  [[ -n "$a" ]] || fail "no metrics rows"
  [[ "$a" == "$b" ]] || { diff <(echo "$a") <(echo "$b"); fail "$ranks rank(s): same seed, different losses"; }
  [[ "$a" != "$c" ]] || fail "$ranks rank(s): different seeds gave identical losses"
  echo "ok: $ranks rank(s), seed 7 twice identical ($(echo "$a" | wc -l) rows), seed 8 differs"
done

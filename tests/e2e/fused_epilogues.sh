#!/usr/bin/env bash
# model.fuse_epilogues (model/fuse_epilogues.hpp) changes no arithmetic: lenet and mlp train to
# bitwise the same losses (metrics.csv prints 17 significant digits) with fusion on and off, on the
# host and the strict device, on 1 rank and, for mlp, 2 ranks.
source "$(dirname "$0")/lib/common.bash"
data=$(fashion_mnist_h5)
run() {  # model ranks device fuse
  local name="$1-$2-$3-$4"
  mpiexec -n "$2" --oversubscribe "$WAVETRAIN" "$WT_SOURCE_DIR/inputs/fashion_$1.toml" --quiet \
    --set "data.path=\"$data\"" --set train.log_every_steps=5 --set train.eval_every_epoch=false \
    --set "device.kind=\"$3\"" --set "model.fuse_epilogues=$4" --steps 20 \
    --run-dir "$dir/$name" >"$dir/$name.out" 2>&1 || { cat "$dir/$name.out"; fail "$name failed"; }
  awk -F, '$1=="train" { print $2, $4 }' "$dir/$name/metrics.csv"
}
# The pass does run in training: the log names the ReLUs it folded, and none when off.
out=$(mpiexec -n 1 "$WAVETRAIN" "$WT_SOURCE_DIR/inputs/fashion_lenet.toml" --set "data.path=\"$data\"" \
  --set train.eval_every_epoch=false --steps 1 --run-dir "$dir/log-on")
grep -q "3 ReLU(s) fused" <<<"$out" || { echo "$out"; fail "lenet: no line naming 3 fused ReLUs"; }
out=$(mpiexec -n 1 "$WAVETRAIN" "$WT_SOURCE_DIR/inputs/fashion_lenet.toml" --set "data.path=\"$data\"" \
  --set train.eval_every_epoch=false --set model.fuse_epilogues=false --steps 1 --run-dir "$dir/log-off")
! grep -q "fused" <<<"$out" || { echo "$out"; fail "lenet: fusion off, yet a line says fused"; }
for config in "lenet 1 host" "lenet 1 strict" "mlp 1 host" "mlp 1 strict" "mlp 2 host"; do
  read -r model ranks device <<<"$config"
  on=$(run "$model" "$ranks" "$device" true)
  off=$(run "$model" "$ranks" "$device" false)
  [[ -n "$on" ]] || fail "$config: no metrics rows"
  [[ "$on" == "$off" ]] || { diff <(echo "$on") <(echo "$off"); fail "$config: fusion changed the losses"; }
  echo "ok: $config: fusion on and off give the same $(echo "$on" | wc -l) losses"
done

#!/usr/bin/env bash
# device.conv_algorithm: "auto" runs LeNet's conv2 as Winograd F(2x2, 5x5), "direct" as oneDNN's
# direct convolution. The same model trains either way: LeNet's first 50 steps' losses on the host
# within 1e-5 of each other (relative; later steps drift apart as any change of rounding makes
# them), yet not bitwise equal (auto did run Winograd), and one epoch on 2 ranks to test
# accuracies within 1 point; the strict device gives the host's bits under auto; a value it does
# not know is an input error (exit 2) naming the key.
source "$(dirname "$0")/lib/common.bash"
if ! "$WAVETRAIN" --version | grep -q "Winograd F(2x2, 5x5) for"; then
  echo "skip: $("$WAVETRAIN" --version | tail -1)"
  exit 77
fi
data=$(fashion_mnist_h5)
run() {  # algorithm device [ranks] [more options...]: prints "step loss" rows
  local name="$1-$2-${3:-1}${tag:-}"
  mpiexec -n "${3:-1}" "$WAVETRAIN" "$WT_SOURCE_DIR/inputs/fashion_lenet.toml" --quiet \
    --set "data.path=\"$data\"" --set train.log_every_steps=10 \
    --set "device.conv_algorithm=\"$1\"" --set "device.kind=\"$2\"" "${@:4}" \
    --run-dir "$dir/$name" >"$dir/$name.out" 2>&1 || { cat "$dir/$name.out"; fail "$name failed"; }
  awk -F, '$1=="train" { print $2, $4 }' "$dir/$name/metrics.csv"
}
early=(--set train.eval_every_epoch=false --steps 50)
auto=$(run auto host 1 "${early[@]}")
direct=$(run direct host 1 "${early[@]}")
[[ $(wc -l <<<"$auto") -eq 5 ]] || fail "expected 5 loss rows, got: $auto"
[[ "$auto" != "$direct" ]] || fail "auto and direct gave bitwise the same losses: Winograd did not run"
paste -d' ' <(echo "$auto") <(echo "$direct") | awk '
  { rel = ($2 - $4) / $4; if (rel < 0) rel = -rel; if (rel > worst) worst = rel
    if ($1 != $3) { print "step mismatch: " $0; bad = 1 } }
  END { printf "largest relative loss difference auto/direct, steps 10-50: %.2e\n", worst
        if (bad || worst > 1e-5) exit 1 }' || fail "auto and direct losses differ by more than 1e-5"
accuracy() { awk -F, '$1=="eval" { a = $5 } END { print a }' "$dir/$1-host-2/metrics.csv"; }
run auto host 2 --set train.epochs=1 >/dev/null
run direct host 2 --set train.epochs=1 >/dev/null
a=$(accuracy auto) d=$(accuracy direct)
awk -v a="$a" -v d="$d" 'BEGIN { if (a == "" || d == "" || a - d > 0.01 || d - a > 0.01) exit 1 }' ||
  fail "one epoch: test accuracy $a under auto, $d under direct (more than 1 point apart)"
echo "ok: LeNet trains the same model under auto and direct (one epoch: test accuracy $a and $d)"
strict=$(tag=-30 run auto strict 1 --set train.eval_every_epoch=false --steps 30)
host=$(tag=-30 run auto host 1 --set train.eval_every_epoch=false --steps 30)
[[ "$strict" == "$host" ]] || { diff <(echo "$strict") <(echo "$host"); fail "strict differs from host under auto"; }
echo "ok: the strict device gives the host's losses under auto"
if out=$("$WAVETRAIN" "$WT_SOURCE_DIR/inputs/fashion_lenet.toml" --set "data.path=\"$data\"" \
  --set 'device.conv_algorithm="winograd"' --steps 1 --run-dir "$dir/bad" 2>&1); then
  fail "an unknown conv_algorithm was accepted"
else
  status=$?
fi
[[ $status -eq 2 ]] || fail "unknown conv_algorithm: exit $status, expected 2: $out"
grep -q "conv_algorithm" <<<"$out" || fail "the message does not name the key: $out"
echo "ok: an unknown algorithm is refused (exit 2): $(head -1 <<<"$out")"

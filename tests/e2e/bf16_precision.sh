#!/usr/bin/env bash
# train.precision = "bf16" (ops/precision.hpp), short lenet runs on 1 rank:
#   - an unknown value is refused (exit 2) naming the deck's file, line and key;
#   - a CPU without bf16 arithmetic (oneDNN capped by DNNL_MAX_CPU_ISA) is refused, exit 2;
#   - bf16 really runs (losses not FP32's bitwise) and stays near FP32 (every logged loss within
#     5% of FP32's over 40 steps);
#   - the strict device trains bitwise the host's bf16 model (checkpoints and losses), lenet and
#     resnet (whose 1x1 stride-2 shortcuts take the im2col path);
#   - checkpoints stay FP32: a bf16 run resumes in FP32 and an FP32 run in bf16, and a bf16 run
#     resumed in bf16 is bitwise the uninterrupted one.
source "$(dirname "$0")/lib/common.bash"
data=$(fashion_mnist_h5)
deck="$WT_SOURCE_DIR/inputs/fashion_lenet.toml"
same_weights() { "$WT_PYTHON" "$WT_SOURCE_DIR/tests/e2e/lib/same_weights.py" "$@"; }
losses() { awk -F, '$1=="train" { print $2, $4 }' "$1/metrics.csv"; }
run() {  # name precision device steps [extra args...]
  local name=$1 precision=$2 device=$3 steps=$4
  shift 4
  mpiexec -n 1 "$WAVETRAIN" "${run_deck:-$deck}" --quiet --set "data.path=\"$data\"" \
    --set train.eval_every_epoch=false --set train.log_every_steps=5 \
    --set checkpoint.every_steps=20 --set "train.precision=\"$precision\"" \
    --set "device.kind=\"$device\"" --steps "$steps" --run-dir "$dir/$name" "$@" \
    >"$dir/$name.out" 2>&1 || { cat "$dir/$name.out"; fail "$name: exit status $?"; }
}
ckpt() { printf '%s/%s/checkpoints/step_%08d.h5' "$dir" "$1" "$2"; }

# An unknown precision: exit 2, the deck's file and line and the key.
sed 's/^\[train\]$/[train]\nprecision = "fp16"/' "$deck" >"$dir/bad.toml"
sed -i "s|^path = .*|path = \"$data\"|; s|^file = \"\.\./|file = \"$WT_SOURCE_DIR/|" "$dir/bad.toml"
line=$(grep -n '^precision = "fp16"' "$dir/bad.toml" | cut -d: -f1)
set +e
out=$(mpiexec -n 1 "$WAVETRAIN" "$dir/bad.toml" --steps 1 --run-dir "$dir/bad" 2>&1)
status=$?
set -e
[[ $status == 2 ]] || { echo "$out"; fail "unknown precision: exit $status, expected 2"; }
grep -q "bad.toml:$line: train.precision" <<<"$out" || { echo "$out"; fail "no file:line:key"; }
echo "ok: train.precision = \"fp16\" refused, exit 2, at bad.toml:$line"

# A CPU that oneDNN runs without bf16 (AVX-512 without its BF16 extension): exit 2, the key named.
set +e
out=$(DNNL_MAX_CPU_ISA=AVX512_CORE mpiexec -n 1 -x DNNL_MAX_CPU_ISA "$WAVETRAIN" "$deck" \
  --set "data.path=\"$data\"" --set 'train.precision="bf16"' --steps 1 --run-dir "$dir/noisa" 2>&1)
status=$?
set -e
[[ $status == 2 ]] || { echo "$out"; fail "bf16 without CPU support: exit $status, expected 2"; }
grep -q 'train.precision.*bf16.*AVX512-BF16' <<<"$out" || { echo "$out"; fail "no reason given"; }
echo "ok: bf16 on a CPU without bf16 arithmetic refused, exit 2"
if ! grep -qw avx512_bf16 /proc/cpuinfo && ! grep -qw amx_bf16 /proc/cpuinfo; then
  echo "skip: this CPU has no bf16 arithmetic; the training checks need one"
  exit 77
fi

# bf16 is on, and near FP32.
run fp32 fp32 host 40
run bf16 bf16 host 40
[[ "$(losses "$dir/fp32")" != "$(losses "$dir/bf16")" ]] || fail "bf16 losses are FP32's bitwise"
paste <(losses "$dir/fp32") <(losses "$dir/bf16") | awk '
  { rel = ($4 - $2) / $2; if (rel < 0) rel = -rel; if (rel > worst) worst = rel
    if (rel > 0.05) { print "step " $1 ": FP32 loss " $2 ", bf16 " $4; bad = 1 } }
  END { printf "ok: bf16 losses within %.2f%% of FP32 over 40 steps\n", 100 * worst; exit bad }' ||
  fail "bf16 losses left the 5% band around FP32's"

# The strict device computes what the host does.
run bf16-strict bf16 strict 40
same_weights "$(ckpt bf16 40)" "$(ckpt bf16-strict 40)" || fail "strict bf16 weights differ"
diff <(losses "$dir/bf16") <(losses "$dir/bf16-strict") || fail "strict bf16 losses differ"
echo "ok: the strict device's bf16 run is the host's bitwise"
# resnet: batch norm, and 1x1 stride-2 shortcuts that oneDNN leaves to the im2col path's rounded
# copies (scratch reserved at issue on the strict device).
run_deck="$WT_SOURCE_DIR/inputs/fashion_resnet.toml" run resnet-bf16 bf16 host 20
run_deck="$WT_SOURCE_DIR/inputs/fashion_resnet.toml" run resnet-bf16-strict bf16 strict 20
same_weights "$(ckpt resnet-bf16 20)" "$(ckpt resnet-bf16-strict 20)" || fail "resnet strict differs"
echo "ok: resnet's strict bf16 run is the host's bitwise"

# Checkpoints are FP32 and move between precisions.
"$WT_PYTHON" - "$(ckpt bf16 40)" <<'EOF' || fail "a bf16 run's checkpoint holds non-FP32 floats"
import sys, h5py
bad = []
h5py.File(sys.argv[1], "r").visititems(
    lambda n, o: bad.append(n) if isinstance(o, h5py.Dataset) and o.dtype.kind == "f"
    and o.dtype.itemsize != 4 and n.split("/")[0] in ("stages", "replicas") else None)
sys.exit(1 if bad else 0)
EOF
run resumed-bf16 bf16 host 20
run resumed-bf16 bf16 host 40 --restart
same_weights "$(ckpt bf16 40)" "$(ckpt resumed-bf16 40)" || fail "bf16 resumed in bf16 differs"
run to-fp32 bf16 host 20
run to-fp32 fp32 host 40 --restart
grep -q "resum" "$dir/to-fp32/log.txt" || { cat "$dir/to-fp32/log.txt"; fail "to-fp32 did not resume"; }
run to-bf16 fp32 host 20
run to-bf16 bf16 host 40 --restart
for name in to-fp32 to-bf16; do
  [[ -f "$(ckpt $name 40)" ]] || fail "$name: no checkpoint at step 40"
  [[ $(losses "$dir/$name" | tail -1 | cut -d' ' -f1) == 40 ]] || fail "$name: did not reach 40"
done
echo "ok: bf16 -> bf16 resume is bitwise; bf16 -> fp32 and fp32 -> bf16 resume and finish"

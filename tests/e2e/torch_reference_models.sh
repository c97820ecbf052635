#!/usr/bin/env bash
# The PyTorch reference of the GPU benchmarks (bench/torch_gpu_reference.py) builds its network
# from wavetrain's own model files, so the throughput and memory it reports are for the same
# model: for every shipped trainable model, each layer's parameter count as the script reads the
# model file, and (where PyTorch is installed) as its PyTorch network holds them, equals what
# `wavetrain --show-stages` reports for that layer. With PyTorch, each network also trains two
# eager steps on the CPU, in FP32 and under autocast to bf16, so the script runs end to end before
# it ever meets a GPU.
source "$(dirname "$0")/lib/common.bash"
python=${WT_PYTHON:-/usr/bin/python3}
script="$WT_SOURCE_DIR/bench/torch_gpu_reference.py"
fashion=$(fashion_mnist_h5)

check_model() {  # deck model batch
  local deck=$1 model=$2 batch=$3
  "$WAVETRAIN" "$WT_SOURCE_DIR/inputs/$deck" --set data.path="\"$fashion\"" --show-stages \
    --run-dir "$dir/$model" > "$dir/$model.stages"
  "$python" "$script" --model "$model" --params > "$dir/$model.params"
  "$python" - "$dir/$model.stages" "$dir/$model.params" <<'PY' || fail "$model: layer parameters differ"
import json, re, sys
wavetrain = {}
for line in open(sys.argv[1]):
    m = re.match(r"^\d+\s+(\S+)\s+\S+\s+\[[^\]]*\]\s+(\d+)\s", line)
    if m:
        wavetrain[m.group(1)] = int(m.group(2))
plan = json.load(open(sys.argv[2]))
assert wavetrain, "no layer lines in --show-stages output"
bad = []
for layer in plan["layers"]:
    want = wavetrain.get(layer["layer"])
    for source in ("params", "torch_params"):
        if source in layer and layer[source] != want:
            bad.append(f'{layer["layer"]}: wavetrain {want}, {source} {layer[source]}')
if len(plan["layers"]) != len(wavetrain):
    bad.append(f'{len(plan["layers"])} layers in the script, {len(wavetrain)} in wavetrain')
print(plan["model"], sum(wavetrain.values()), "parameters in", len(wavetrain), "layers;",
      "PyTorch counted too" if "torch_params" in plan["layers"][0] else "no PyTorch here")
if bad:
    print("\n".join(bad))
    sys.exit(1)
PY
  if "$python" -c "import torch" 2>/dev/null; then
    "$python" "$script" --model "$model" --batch "$batch" --device cpu --steps 2 --warmup 1 \
      --repeats 1 > "$dir/$model.json" || fail "$model: the PyTorch network did not train"
    grep -q '"samples_per_s"' "$dir/$model.json" || fail "$model: no throughput line"
    # Under autocast to bf16 (issue 37's GPU rows) as well.
    "$python" "$script" --model "$model" --batch "$batch" --device cpu --steps 2 --warmup 1 \
      --repeats 1 --precision bf16 > "$dir/$model-bf16.json" || fail "$model: no bf16 training"
    grep -q '"precision": "bf16"' "$dir/$model-bf16.json" || fail "$model: no bf16 line"
  fi
}

check_model fashion_mlp.toml mlp 64
check_model fashion_lenet.toml lenet 64
check_model fashion_vgg.toml vgg_small 64
check_model fashion_resnet.toml resnet 128
check_model text_transformer.toml transformer_small 32

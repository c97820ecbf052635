#!/usr/bin/env bash
# ScaleDNN's weight codec (seeds/scalednn.txt §IV-C), three parts:
#   sim       where the paper's effect lives: the simulator on 4 and 8 ranks of the PCIe device file
#             (bench/devices/dgx1_v100_pcie_hops.toml) and of NVLink (v100), gang with
#             gang_sync = "master" and waves, VGG-19 and BERT-large shapes: broadcast time (the sum
#             of the Broadcast spans, per rank) and step time with none, scalednn and bf16, and the
#             savings against none (paper: broadcast -45.77% codec, -26.98% bf16; step -7.22%).
#   machine   this machine, 2 ranks, waves: samples/s, the Broadcast instructions' time per step
#             (the root's encoding included) and the bytes they moved, from the trace.
#   accuracy  waves lenet on 2 ranks, 3 Fashion-MNIST epochs: test accuracy exact, scalednn (raw
#             and paper) and bf16 (about 8 minutes).
#   small     the simulator: the codec on small models (mlp, lenet), and min_bytes.
#   all       the simulator: ScaleDNN (shard + codec) against the DataParallel baseline (scatter,
#             exact), master-synchronised gang.
#   data      this machine: shard vs scatter, preload on and off, mlp at global batch 1024.
#   codec     this machine: encode and decode time of each codec for the waves decks' models.
#   bench/scalednn.sh [sim] [small] [all] [machine] [data] [codec] [accuracy]
#                                             (default: sim small all machine data codec)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
build="$here/build"
parts=("$@")
[[ ${#parts[@]} -gt 0 ]] || parts=(sim small all machine data codec)
out=$(mktemp -d "${TMPDIR:-/tmp}/wt-scalednn.XXXXXX")
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none

# "broadcast_ms step_ms" of one simulation.
simulate() {  # deck ranks device kind codec
  local trace="$out/sim.h5"
  "$build/wavetrain" "$here/inputs/$1" --simulate --ranks "$2" --device "$3" \
    --set "schedule.kind=$4" --set "schedule.gang_sync=$([[ $4 == gang ]] && echo master || echo allreduce)" \
    --set "compress.weights=$5" --simulate-trace "$trace" > "$out/sim.txt"
  /usr/bin/python3 - "$here/analysis" "$trace" "$out/sim.txt" <<'PY'
import re, sys
sys.path.insert(0, sys.argv[1])
import wtrun
trace = wtrun.load_trace(sys.argv[2])
per_rank = [sum(e - b for n, b, e in zip(r.events["name"], r.events["begin"], r.events["end"])
                if n == "Broadcast") for r in trace.ranks.values()]
value, unit = re.search(r"step: ([0-9.]+) (ms|s|us)", open(sys.argv[3]).read()).groups()
step = float(value) * {"s": 1e3, "ms": 1.0, "us": 1e-3}[unit]
print(f"{1e3 * sum(per_rank) / len(per_rank):.2f} {step:.2f}")
PY
}

sim_part() {
  echo "| model | schedule | ranks | link | broadcast ms none / scalednn / bf16 | saving scalednn / bf16 | step ms none / scalednn / bf16 | step saving scalednn / bf16 |"
  echo "|---|---|---:|---|---|---|---|---|"
  for deck in vgg19_sim.toml bert_large_sim.toml; do
    for kind in gang waves; do
      for ranks in 4 8; do
        for device in "$here/bench/devices/dgx1_v100_pcie_hops.toml" v100; do
          read -r b0 s0 <<<"$(simulate "$deck" "$ranks" "$device" "$kind" none)"
          read -r b1 s1 <<<"$(simulate "$deck" "$ranks" "$device" "$kind" scalednn)"
          read -r b2 s2 <<<"$(simulate "$deck" "$ranks" "$device" "$kind" bf16)"
          link=$([[ $device == v100 ]] && echo NVLink || echo PCIe)
          awk -v m="${deck%_sim.toml}" -v k="$kind" -v r="$ranks" -v l="$link" -v b0="$b0" -v b1="$b1" \
            -v b2="$b2" -v s0="$s0" -v s1="$s1" -v s2="$s2" 'BEGIN {
              printf "| %s | %s | %d | %s | %.1f / %.1f / %.1f | %.1f%% / %.1f%% | %.1f / %.1f / %.1f | %.2f%% / %.2f%% |\n",
                m, k, r, l, b0, b1, b2, 100 * (1 - b1 / b0), 100 * (1 - b2 / b0), s0, s1, s2,
                100 * (1 - s1 / s0), 100 * (1 - s2 / s0) }'
        done
      done
    done
  done
}

# ScaleDNN's data path and codec together against the DataParallel baseline (gang master-sync
# with rank 0 scattering every batch, no codec): predicted step-time saving (paper, 4 GPUs: up to
# 39.38% on PCIe, 19.20% on NVLink).
all_part() {
  echo "| model | ranks | link | baseline step ms (scatter, exact) | ScaleDNN step ms (shard, scalednn) | saving |"
  echo "|---|---:|---|---:|---:|---:|"
  for deck in vgg19_sim.toml bert_large_sim.toml; do
    for ranks in 4 8; do
      for device in "$here/bench/devices/dgx1_v100_pcie_hops.toml" v100; do
        step() {
          "$build/wavetrain" "$here/inputs/$deck" --simulate --ranks "$ranks" --device "$device" \
            --set schedule.kind=gang --set schedule.gang_sync=master "$@" |
            awk '/^  step:/ { print ($3 == "s" ? 1e3 * $2 : $2) }'
        }
        base=$(step --set data.distribution=scatter --set compress.weights=none)
        ours=$(step --set data.distribution=shard --set compress.weights=scalednn)
        link=$([[ $device == v100 ]] && echo NVLink || echo PCIe)
        awk -v m="${deck%_sim.toml}" -v r="$ranks" -v l="$link" -v a="$base" -v b="$ours" \
          'BEGIN { printf "| %s | %d | %s | %.1f | %.1f | %.1f%% |\n", m, r, l, a, b, 100 * (1 - b / a) }'
      done
    done
  done
}

# The data path on this machine: mlp at global batch 1024 (data-heavy), 2 ranks, shard or
# scatter, preload on or off: step time and the time each rank spends in LoadBatch (trace).
data_part() {
  local data="$here/data/fashion_mnist.h5"
  echo "| distribution | preload | samples/s | step ms | LoadBatch ms/step (mean of ranks) |"
  echo "|---|---|---:|---:|---:|"
  for dist in shard scatter; do
    for preload in true false; do
      local run="$out/data_${dist}_$preload"
      mpiexec -n 2 "$build/wavetrain" "$here/inputs/fashion_mlp.toml" --run-dir "$run" --steps 120 \
        --quiet --set "data.distribution=$dist" --set "data.preload=$preload" \
        --set train.global_batch=1024 --set train.eval_every_epoch=false --set trace.enabled=true \
        --set trace.start_step=100 --set trace.end_step=120 --set train.log_every_steps=20 \
        > "$run.log" 2>&1 || { cat "$run.log"; exit 1; }
      /usr/bin/python3 - "$here/analysis" "$run" "$dist" "$preload" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[1])
import wtrun
run = sys.argv[2]
rate = json.load(open(run + "/summary.json"))["samples_per_s_median"]
trace = wtrun.load_trace(run)
load = sum(e - b for r in trace.ranks.values()
           for n, b, e in zip(r.events["name"], r.events["begin"], r.events["end"]) if n == "LoadBatch")
print(f"| {sys.argv[3]} | {sys.argv[4]} | {rate:.0f} | {1e3 * 1024 / rate:.2f} | "
      f"{1e3 * load / (20 * len(trace.ranks)):.2f} |")
PY
    done
  done
}

# Small models: is the codec worth its encoding? (paper: small models lose 1.64%; min_bytes
# switches it off per stage).
small_part() {
  echo "| model | link | step ms none / scalednn / scalednn with min_bytes = 1 GB | codec saving |"
  echo "|---|---|---|---:|"
  for deck in fashion_mlp.toml fashion_lenet.toml; do
    for device in "$here/bench/devices/dgx1_v100_pcie_hops.toml" v100; do
      step() {
        "$build/wavetrain" "$here/inputs/$deck" --simulate --ranks 4 --device "$device" \
          --set schedule.kind=gang --set schedule.gang_sync=master "$@" |
          awk '/^  step:/ { print ($3 == "s" ? 1e3 * $2 : ($3 == "us" ? $2 / 1e3 : $2)) }'
      }
      a=$(step --set compress.weights=none)
      b=$(step --set compress.weights=scalednn)
      c=$(step --set compress.weights=scalednn --set compress.min_bytes=1000000000)
      link=$([[ $device == v100 ]] && echo NVLink || echo PCIe)
      awk -v m="${deck%.toml}" -v l="$link" -v a="$a" -v b="$b" -v c="$c" \
        'BEGIN { printf "| %s | %s | %.3f / %.3f / %.3f | %.1f%% |\n", m, l, a, b, c, 100 * (1 - b / a) }'
    done
  done
}

# Encode and decode time of each codec on this machine for the waves decks' models, from
# bench/codec_speed.cpp (built here with the library's flags): what the owner adds before each
# broadcast and a member after it.
codec_part() {
  g++ -std=c++17 -O3 -DNDEBUG -I"$here/src" "$here/bench/codec_speed.cpp" \
    "$here/src/compress/weight_codec.cpp" -o "$out/codec_speed"
  for deck in fashion_lenet fashion_vgg text_transformer; do
    local n
    n=$("$build/wavetrain" "$here/inputs/$deck.toml" --show-stages --ranks 1 \
      --set schedule.balance=flops 2>/dev/null | awk '/^0 +0-/ { print $(NF-2) }')
    echo "$deck: $n parameters, tensors of up to 65536 values"
    "$out/codec_speed" "$n" 65536 20
  done
}

machine_part() {
  local data="$here/data/fashion_mnist.h5" kjv="$here/data/kjv.h5"
  echo "| deck | codec | samples/s | Broadcast instructions ms/step | broadcast MB/step |"
  echo "|---|---|---:|---:|---:|"
  for deck in fashion_lenet.toml fashion_vgg.toml text_transformer.toml; do
    for codec in none scalednn bf16; do
      local run="$out/${deck%.toml}_$codec"
      mpiexec -n 2 "$build/wavetrain" "$here/inputs/$deck" --run-dir "$run" --steps 60 --quiet \
        --set schedule.kind=waves --set "compress.weights=$codec" --set train.eval_every_epoch=false \
        --set trace.enabled=true --set trace.start_step=40 --set trace.end_step=60 \
        --set train.log_every_steps=20 > "$run.log" 2>&1 || { cat "$run.log"; exit 1; }
      /usr/bin/python3 - "$here/analysis" "$run" "$deck" "$codec" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[1])
import wtrun
run = sys.argv[2]
rate = json.load(open(run + "/summary.json"))["samples_per_s_median"]
trace = wtrun.load_trace(run)
t = b = 0.0
for rank in trace.ranks.values():
    ev = rank.events
    for n, s, e, nb in zip(ev["name"], ev["begin"], ev["end"], ev["bytes"]):
        if n == "Broadcast":
            t += e - s
            b += nb
steps = 20 * len(trace.ranks)
print(f"| {sys.argv[3]} | {sys.argv[4]} | {rate:.0f} | {1e3 * t / steps:.3f} | {b / steps / 1e6:.3f} |")
PY
    done
  done
}

accuracy_part() {
  echo "| codec | out_of_range | test accuracy after 3 epochs |"
  echo "|---|---|---:|"
  for cfg in "none raw" "scalednn raw" "scalednn paper" "bf16 raw"; do
    read -r codec mode <<<"$cfg"
    local run="$out/acc_${codec}_$mode"
    mpiexec -n 2 "$build/wavetrain" "$here/inputs/fashion_lenet.toml" --run-dir "$run" --quiet \
      --set schedule.kind=waves --set "compress.weights=$codec" --set "compress.out_of_range=$mode" \
      --set train.epochs=3 > "$run.log" 2>&1 || { cat "$run.log"; exit 1; }
    echo "| $codec | $mode | $(awk -F, '$1=="eval" { a=$5 } END { print a }' "$run/metrics.csv") |"
  done
}

echo "results in $out"
for p in "${parts[@]}"; do "${p}_part"; echo; done

#!/usr/bin/env bash
# Fused epilogues on and off (model.fuse_epilogues, model/fuse_epilogues.hpp), side by side: lenet
# and mlp on 1 rank, the bench decks of compare_torch.sh (Fashion-MNIST, batch 64, SGD momentum).
#
#   bench/fused_epilogues.sh [--rounds R] [--steps N] [--warmup W] [--models "lenet mlp"] [--out DIR]
#
# Steps per run: lenet 300 (+30 warmup), mlp 2000 (+100), compare_torch.sh's figures, unless
# --steps/--warmup set one count for both.
# Each round runs every model with fusion on and off, alternating which goes first so that drift
# in machine load hits both alike, and prints a markdown table of medians over rounds of each run's
# samples_per_s_median (<run-dir>/summary.json) and the ratio on/off. Environment as
# compare_torch.sh: WT_BUILD_DIR (default build), PYTHON (default /usr/bin/python3).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
REPO=$PWD

ROUNDS=5 STEPS="" WARMUP="" MODELS="lenet mlp" OUT=""
while (($#)); do
  case "$1" in
    --rounds) ROUNDS=$2; shift 2 ;;
    --steps) STEPS=$2; shift 2 ;;
    --warmup) WARMUP=$2; shift 2 ;;
    --models) MODELS=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    -h | --help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "error: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

BUILD=${WT_BUILD_DIR:-build}
[[ $BUILD == /* ]] || BUILD=$REPO/$BUILD
WAVETRAIN=$BUILD/wavetrain
PYTHON=${PYTHON:-/usr/bin/python3}
if [[ ! -x $WAVETRAIN ]]; then
  echo "error: $WAVETRAIN is not built; run tools/setup.sh first" >&2
  exit 1
fi
if [[ ! -f $REPO/data/fashion_mnist.h5 ]]; then
  echo "error: data/fashion_mnist.h5 is missing; tools/setup.sh creates it" >&2
  exit 1
fi

export OPENBLAS_NUM_THREADS=1
export MALLOC_TRIM_THRESHOLD_=${MALLOC_TRIM_THRESHOLD_:-1000000000}
export MALLOC_MMAP_THRESHOLD_=${MALLOC_MMAP_THRESHOLD_:-1000000000}
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/wt-fused.XXXXXX")}
mkdir -p "$OUT"
RESULTS=$OUT/results.jsonl
: >"$RESULTS"

# run MODEL FUSE ROUND: one 1-rank run, its summary appended as a JSON line.
run() {
  local model=$1 fuse=$2 round=$3
  local dir=$OUT/$model-fuse-$fuse-$round steps=${STEPS:-300} warmup=${WARMUP:-30}
  [[ $model == mlp ]] && steps=${STEPS:-2000} warmup=${WARMUP:-100}
  rm -rf "$dir"
  if ! "$WAVETRAIN" "$REPO/bench/decks/${model}_bench.toml" --set "model.fuse_epilogues=$fuse" \
      --set "train.max_steps=$((steps + warmup))" --run-dir "$dir" >"$dir.log" 2>&1; then
    echo "error: $model fuse=$fuse failed (log: $dir.log):" >&2
    tail -5 "$dir.log" | sed 's/^/   /' >&2
    exit 1
  fi
  "$PYTHON" -c 'import json,sys; s=json.load(open(sys.argv[1])); print(json.dumps({"model": sys.argv[2], "fuse": sys.argv[3], "sps": float(s["samples_per_s_median"])}))' \
    "$dir/summary.json" "$model" "$fuse" >>"$RESULTS"
}

echo "==> $ROUNDS round(s), batch 64, 1 rank, OPENBLAS_NUM_THREADS=1; results in $OUT"
for ((round = 1; round <= ROUNDS; round++)); do
  for model in $MODELS; do
    if ((round % 2)); then order="true false"; else order="false true"; fi
    echo "==> round $round: $model (fusion $order)"
    for fuse in $order; do run "$model" "$fuse" "$round"; done
  done
done

"$PYTHON" - "$RESULTS" <<'EOF'
import json, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
print()
print("| model (1 rank) | fusion off samples/s | fusion on samples/s | ratio on/off | per-round ratios |")
print("|---|---:|---:|---:|---|")
for model in dict.fromkeys(r["model"] for r in rows):
    on = [r["sps"] for r in rows if r["model"] == model and r["fuse"] == "true"]
    off = [r["sps"] for r in rows if r["model"] == model and r["fuse"] == "false"]
    per_round = " ".join(f"{a / b:.3f}" for a, b in zip(on, off))
    print(f"| {model} | {statistics.median(off):,.0f} | {statistics.median(on):,.0f} | "
          f"{statistics.median(on) / statistics.median(off):.3f} | {per_round} |")
EOF

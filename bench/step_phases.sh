#!/usr/bin/env bash
# Where one rank's training step goes, per phase (issue 37), for one or more wavetrain binaries
# side by side: each round runs every binary once per model, the order alternating by round.
#
#   bench/step_phases.sh [--models "mlp lenet"] [--rounds R] [--no-perf] [--out DIR] [BINARY...]
#
# Each run traces a window of steps (mlp: steps 200..1200, lenet: 10..70) under
# `perf record -e cpu-clock -c 50000 -k CLOCK_MONOTONIC` (a sample every 50 us of CPU, on the
# trace's clock), and `--show-stages` times each layer alone; bench/step_phases.py turns the three
# into per-phase tables (wall per step from the trace, CPU per step by kind of code from perf,
# forward+backward per layer), medians over rounds, one column per binary. BINARY defaults to
# build/wavetrain; label each with NAME=PATH (e.g. main=/tmp/main/wavetrain lean=build/wavetrain).
# Without perf (or with --no-perf) the CPU table is left out.
#
# Same environment as compare_torch.sh: OPENBLAS_NUM_THREADS=1, malloc trim/mmap thresholds 1e9,
# OPENBLAS_CORETYPE as inherited.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
REPO=$PWD
MODELS="mlp lenet" ROUNDS=3 PERF=1 OUT=""
BINARIES=()
while (($#)); do
  case "$1" in
    --models) MODELS=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --no-perf) PERF=0; shift ;;
    --out) OUT=$2; shift 2 ;;
    -h | --help) sed -n '2,16p' "$0"; exit 0 ;;
    -*) echo "error: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) BINARIES+=("$1"); shift ;;
  esac
done
((${#BINARIES[@]})) || BINARIES=("build/wavetrain")
PYTHON=${PYTHON:-/usr/bin/python3}
if ((PERF)) && ! perf stat -e cpu-clock true >/dev/null 2>&1; then
  echo "note: perf is not usable here; the CPU-by-phase table is left out" >&2
  PERF=0
fi
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
export MALLOC_TRIM_THRESHOLD_=${MALLOC_TRIM_THRESHOLD_:-1000000000}
export MALLOC_MMAP_THRESHOLD_=${MALLOC_MMAP_THRESHOLD_:-1000000000}
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/wt-phases.XXXXXX")}
mkdir -p "$OUT"
RESULTS=$OUT/results.jsonl
: >"$RESULTS"

# phases LABEL BINARY MODEL ROUND: one traced (and perf-sampled) run, its summary appended.
phases() {
  local label=$1 bin=$2 model=$3 round=$4 warm=200 steps=1000
  [[ $model == lenet ]] && warm=10 steps=60
  local dir=$OUT/$model-$label-$round
  rm -rf "$dir" && mkdir -p "$dir"
  if ! "$bin" "$REPO/bench/decks/${model}_bench.toml" --show-stages >"$dir/stages.txt" 2>&1; then
    echo "error: $label --show-stages failed:" >&2 && tail -3 "$dir/stages.txt" >&2 && exit 1
  fi
  local run=("$bin" "$REPO/bench/decks/${model}_bench.toml" --run-dir "$dir/run" --quiet
    --set train.epochs=1000 --set "train.max_steps=$((warm + steps))" --set trace.enabled=true
    --set "trace.start_step=$warm" --set "trace.end_step=$((warm + steps))")
  local extra=()
  if ((PERF)); then
    perf record -q -e cpu-clock -c 50000 -k CLOCK_MONOTONIC -o "$dir/perf.data" -- "${run[@]}" \
      >"$dir/log" 2>&1 || { echo "error: $label failed:" >&2 && tail -3 "$dir/log" >&2 && exit 1; }
    perf script -i "$dir/perf.data" -F pid,tid,time,ip,sym,dso >"$dir/perf.txt" 2>/dev/null
    rm -f "$dir/perf.data"
    extra=(--perf "$dir/perf.txt")
  else
    "${run[@]}" >"$dir/log" 2>&1 || { echo "error: $label failed:" >&2 && tail -3 "$dir/log" >&2 && exit 1; }
  fi
  "$PYTHON" "$REPO/bench/step_phases.py" summarize --trace "$dir/run/trace.h5" --label "$label" \
    --model "$model" --stages "$dir/stages.txt" "${extra[@]}" >>"$RESULTS"
  rm -f "$dir/perf.txt"
}

echo "==> $ROUNDS round(s); OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-<unset>}; load $(cut -d' ' -f1-3 /proc/loadavg); results in $OUT"
for ((round = 1; round <= ROUNDS; round++)); do
  order=("${BINARIES[@]}")
  if ((round % 2 == 0)); then  # alternate which binary runs first
    order=()
    for ((i = ${#BINARIES[@]} - 1; i >= 0; i--)); do order+=("${BINARIES[i]}"); done
  fi
  for model in $MODELS; do
    for spec in "${order[@]}"; do
      label=${spec%%=*} bin=${spec#*=}
      [[ $spec == *=* ]] || label=$bin
      echo "==> round $round: $model, $label ($bin)"
      phases "$label" "$(realpath "$bin")" "$model" "$round"
    done
  done
done
"$PYTHON" "$REPO/bench/step_phases.py" table "$RESULTS"

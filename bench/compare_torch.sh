#!/usr/bin/env bash
# Side-by-side throughput of wavetrain and PyTorch on the same models, data and batch.
#
#   bench/compare_torch.sh [--rounds R] [--steps N] [--warmup W] [--models "lenet mlp"]
#                          [--torch-only] [--out DIR]
#
# Each round runs, interleaved so that drift in machine load hits both sides alike:
#   1 core : wavetrain 1 rank            vs  torch_reference.py --threads 1
#   2 cores: wavetrain mpirun -n 2       vs  torch_reference.py --ddp (gloo, 2 x 1 thread)
#                                        and torch_reference.py --threads 2
# and prints a markdown table of medians over rounds (bench/compare_torch_table.py), with the
# rows issue 37 tracks: 1 rank against PyTorch's 1 thread, and 2 ranks against PyTorch's best
# 2-core setup (whichever of 1 thread, 2 threads and DDP 2x1 ran fastest), each with its
# per-round ratios (wavetrain's round r over PyTorch's round r) to show the spread. Both sides run
# under the same environment: OPENBLAS_CORETYPE as inherited (stated in the output),
# OPENBLAS_NUM_THREADS=1, and glibc malloc kept from trimming (MALLOC_TRIM_THRESHOLD_ and
# MALLOC_MMAP_THRESHOLD_ = 1e9).
# wavetrain reports through <run-dir>/summary.json: samples_per_s_median, peak_rss_mb, wall_s;
# torch_reference.py's samples_per_s_median is the same statistic (global batch / median step).
#
# Environment: WT_BUILD_DIR (default build), PYTHON (default /usr/bin/python3, the interpreter
# with Debian's torch/h5py), WT_MPIRUN_ARGS (extra mpirun arguments).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
REPO=$PWD

ROUNDS=3 STEPS=300 WARMUP=30 MODELS="lenet mlp" TORCH_ONLY=0 OUT=""
while (($#)); do
  case "$1" in
    --rounds) ROUNDS=$2; shift 2 ;;
    --steps) STEPS=$2; shift 2 ;;
    --warmup) WARMUP=$2; shift 2 ;;
    --models) MODELS=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --torch-only) TORCH_ONLY=1; shift ;;
    -h | --help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "error: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

BUILD=${WT_BUILD_DIR:-build}
[[ $BUILD == /* ]] || BUILD=$REPO/$BUILD
WAVETRAIN=$BUILD/wavetrain
PYTHON=${PYTHON:-/usr/bin/python3}
DATA=$REPO/data/fashion_mnist.h5

if ((!TORCH_ONLY)) && [[ ! -x $WAVETRAIN ]]; then
  echo "error: $WAVETRAIN is not built; run tools/setup.sh first (or pass --torch-only)" >&2
  exit 1
fi
if [[ ! -f $DATA ]]; then
  echo "error: $DATA is missing; tools/setup.sh creates it" >&2
  exit 1
fi
if ! "$PYTHON" -c 'import torch, h5py' 2>/dev/null; then
  echo "error: $PYTHON cannot import torch and h5py; apt-get install python3-torch python3-h5py" >&2
  exit 1
fi

# One environment for both sides; set before either process starts (malloc reads it at start).
export OPENBLAS_NUM_THREADS=1
export MALLOC_TRIM_THRESHOLD_=${MALLOC_TRIM_THRESHOLD_:-1000000000}
export MALLOC_MMAP_THRESHOLD_=${MALLOC_MMAP_THRESHOLD_:-1000000000}
export OMPI_MCA_btl_vader_single_copy_mechanism=${OMPI_MCA_btl_vader_single_copy_mechanism:-none}
if [[ $(id -u) -eq 0 ]]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
MPIRUN=(mpirun -n 2)
(($(nproc) < 2)) && MPIRUN+=(--oversubscribe)
# shellcheck disable=SC2206  # WT_MPIRUN_ARGS holds several words on purpose
MPIRUN+=(${WT_MPIRUN_ARGS:-})

OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/wt-compare.XXXXXX")}
mkdir -p "$OUT"
RESULTS=$OUT/results.jsonl
: >"$RESULTS"
FAILURES=0

# The dataset read once before each run: this VM reclaims the page cache within minutes, and
# wavetrain reads its rows from the mapped file as it trains (cold, a batch's LoadBatch took 0.6-2.5
# ms where 0.09 is usual, over the first hundreds of steps), while PyTorch's script loads the whole
# set into memory before it times anything. Warm, both sides read from memory.
warm_page_cache() { cat "$DATA" >/dev/null; }

# wavetrain MODEL CONFIG ROUND RANKS: run once, append its summary as a JSON line.
run_wavetrain() {
  warm_page_cache
  local model=$1 config=$2 round=$3 ranks=$4
  local dir=$OUT/wt-$model-$config-$round
  local cmd=("$WAVETRAIN" "$REPO/bench/decks/${model}_bench.toml"
             --set "train.max_steps=$((STEPS + WARMUP))" --run-dir "$dir")
  ((ranks > 1)) && cmd=("${MPIRUN[@]}" "${cmd[@]}")
  rm -rf "$dir"
  if ! "${cmd[@]}" >"$dir.log" 2>&1; then
    echo "   wavetrain $model $config failed (log: $dir.log):" >&2
    tail -5 "$dir.log" | sed 's/^/     /' >&2
    FAILURES=$((FAILURES + 1))
    return 0
  fi
  if ! "$PYTHON" - "$dir/summary.json" "$model" "$config" "$round" >>"$RESULTS" 2>>"$dir.log" <<'EOF'; then
import json, sys
s = json.load(open(sys.argv[1]))
print(json.dumps({"impl": "wavetrain", "model": sys.argv[2], "config": sys.argv[3], "round": int(sys.argv[4]),
                  "samples_per_s_median": float(s["samples_per_s_median"]),
                  "peak_rss_mb": float(s["peak_rss_mb"]), "wall_s": float(s["wall_s"])}))
EOF
    echo "   wavetrain $model $config: $dir/summary.json missing or incomplete" >&2
    FAILURES=$((FAILURES + 1))
  fi
}

# torch MODEL CONFIG ARGS...: run once, append its JSON line under the shared config name.
run_torch() {
  warm_page_cache
  local model=$1 config=$2; shift 2
  local log=$OUT/torch-$model-$config.log
  if "$PYTHON" "$REPO/bench/torch_reference.py" --data "$DATA" --model "$model" --steps "$STEPS" \
      --warmup "$WARMUP" --repeats 1 "$@" >"$log.out" 2>"$log"; then
    "$PYTHON" -c 'import json,sys; r=json.loads(sys.stdin.read().strip().splitlines()[-1]); r["config"]=sys.argv[1]; r["round"]=int(sys.argv[2]); print(json.dumps(r))' \
      "$config" "$round" <"$log.out" >>"$RESULTS"
  else
    echo "   torch $model $config failed (log: $log):" >&2
    tail -5 "$log" | sed 's/^/     /' >&2
    FAILURES=$((FAILURES + 1))
  fi
}

echo "==> $ROUNDS round(s), $STEPS timed steps (+$WARMUP warmup), global batch 64;" \
     "OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-<unset>}; results in $OUT"
for ((round = 1; round <= ROUNDS; round++)); do
  for model in $MODELS; do
    echo "==> round $round: $model"
    # Alternate which side goes first so neither always runs on a warmer (or busier) machine.
    if ((round % 2)); then order="wt torch"; else order="torch wt"; fi
    for side in $order; do
      if [[ $side == wt ]]; then
        ((TORCH_ONLY)) && continue
        run_wavetrain "$model" 1core "$round" 1
        run_wavetrain "$model" 2cores "$round" 2
      else
        run_torch "$model" 1core --threads 1
        run_torch "$model" 2cores --ddp
        run_torch "$model" 2cores-threads --threads 2
      fi
    done
  done
done

"$PYTHON" "$REPO/bench/compare_torch_table.py" "$RESULTS"

if ((FAILURES)); then
  echo "error: $FAILURES run(s) failed; see the logs in $OUT" >&2
  exit 1
fi

#!/usr/bin/env bash
# train.precision = "bf16" against FP32 and against PyTorch's bf16 autocast: lenet, 1 rank (1
# thread), global batch 64, the models, data and optimizer of bench/compare_torch.sh
# (bench/decks/lenet_bench.toml and bench/torch_reference.py, here with --autocast bf16).
#
#   bench/bf16_speed.sh [--rounds R] [--steps N] [--warmup W] [--out DIR]
#
# Each round runs the four, one after another, the order rotating every round so that drift in
# the machine's load hits all alike: wavetrain fp32, wavetrain bf16, torch fp32, torch bf16
# (autocast). Prints medians over rounds of each side's samples/s (its median over steps), each
# round's own ratios with their median, and the ratios of the medians. Same environment as
# compare_torch.sh: OPENBLAS_CORETYPE as inherited (stated), OPENBLAS_NUM_THREADS=1, glibc malloc
# kept from trimming. WT_BUILD_DIR (default build), PYTHON (default /usr/bin/python3).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
REPO=$PWD
ROUNDS=5 STEPS=300 WARMUP=30 OUT=""
while (($#)); do
  case "$1" in
    --rounds) ROUNDS=$2; shift 2 ;;
    --steps) STEPS=$2; shift 2 ;;
    --warmup) WARMUP=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    -h | --help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "error: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
BUILD=${WT_BUILD_DIR:-build}
[[ $BUILD == /* ]] || BUILD=$REPO/$BUILD
WAVETRAIN=$BUILD/wavetrain
PYTHON=${PYTHON:-/usr/bin/python3}
DATA=$REPO/data/fashion_mnist.h5
[[ -x $WAVETRAIN ]] || { echo "error: $WAVETRAIN is not built" >&2; exit 1; }
[[ -f $DATA ]] || { echo "error: $DATA is missing; tools/setup.sh creates it" >&2; exit 1; }
export OPENBLAS_NUM_THREADS=1
export MALLOC_TRIM_THRESHOLD_=${MALLOC_TRIM_THRESHOLD_:-1000000000}
export MALLOC_MMAP_THRESHOLD_=${MALLOC_MMAP_THRESHOLD_:-1000000000}
[[ $(id -u) -ne 0 ]] || export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/wt-bf16.XXXXXX")}
mkdir -p "$OUT"
RESULTS=$OUT/results.jsonl
: >"$RESULTS"

# The dataset read once before each run: this VM reclaims the page cache within minutes, and
# wavetrain reads its rows from the mapped file as it trains (cold, a batch's LoadBatch took 0.6-2.5
# ms where 0.09 is usual, over the first hundreds of steps), while PyTorch's script loads the whole
# set into memory before it times anything. Warm, both sides read from memory.
warm_page_cache() { cat "$DATA" >/dev/null; }

run() {  # side (wt-fp32 | wt-bf16 | torch-fp32 | torch-bf16) round
  warm_page_cache
  local side=$1 round=$2 log=$OUT/$1-$2
  if [[ $side == wt-* ]]; then
    "$WAVETRAIN" "$REPO/bench/decks/lenet_bench.toml" --set "train.max_steps=$((STEPS + WARMUP))" \
      --set "train.precision=\"${side#wt-}\"" --run-dir "$log" >"$log.log" 2>&1 ||
      { tail -5 "$log.log" >&2; return 1; }
    "$PYTHON" -c 'import json,sys; s=json.load(open(sys.argv[1]))
print(json.dumps({"side": sys.argv[2], "rate": float(s["samples_per_s_median"])}))' \
      "$log/summary.json" "$side" >>"$RESULTS"
  else
    local autocast=off
    [[ $side == torch-bf16 ]] && autocast=bf16
    "$PYTHON" "$REPO/bench/torch_reference.py" --data "$DATA" --model lenet --steps "$STEPS" \
      --warmup "$WARMUP" --repeats 1 --threads 1 --autocast "$autocast" >"$log.out" 2>"$log.log" ||
      { tail -5 "$log.log" >&2; return 1; }
    "$PYTHON" -c 'import json,sys; r=json.loads(sys.stdin.read().strip().splitlines()[-1])
print(json.dumps({"side": sys.argv[1], "rate": r["samples_per_s_median"]}))' "$side" \
      <"$log.out" >>"$RESULTS"
  fi
}

sides=(wt-fp32 wt-bf16 torch-fp32 torch-bf16)
echo "==> lenet, 1 rank / 1 thread, batch 64: $ROUNDS rounds of $STEPS timed steps (+$WARMUP" \
  "warmup); OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-<unset>}; $(nproc) cores, load" \
  "$(cut -d' ' -f1-3 /proc/loadavg) at the start; results in $OUT"
for ((round = 1; round <= ROUNDS; round++)); do
  for ((i = 0; i < 4; i++)); do
    side=${sides[$(((i + round - 1) % 4))]}
    run "$side" "$round"
  done
  echo "==> round $round done (load $(cut -d' ' -f1 /proc/loadavg))"
done

"$PYTHON" - "$RESULTS" <<'EOF'
import json, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
med = {s: statistics.median(r["rate"] for r in rows if r["side"] == s)
       for s in ("wt-fp32", "wt-bf16", "torch-fp32", "torch-bf16")}
per_round = {s: [round(r["rate"]) for r in rows if r["side"] == s] for s in med}
print()
print("| side | samples/s (median of rounds) | per round |")
print("|---|---:|---|")
for s, v in med.items():
    print(f"| {s} | {v:,.0f} | {per_round[s]} |")
# Each round's own ratios (its four runs back to back): the machine's load moves between rounds.
rounds = [{r["side"]: r["rate"] for r in rows[i:i + 4]} for i in range(0, len(rows), 4)]
for a, b in (("wt-bf16", "wt-fp32"), ("wt-bf16", "torch-bf16")):
    ratios = [r[a] / r[b] for r in rounds if a in r and b in r]
    print(f"per round {a} / {b}: {', '.join(f'{x:.2f}' for x in ratios)}; "
          f"median {statistics.median(ratios):.2f}")
print()
print("ratios of the medians:")
print(f"wavetrain bf16 / wavetrain fp32 = {med['wt-bf16'] / med['wt-fp32']:.2f}x")
print(f"wavetrain bf16 / torch bf16 autocast = {med['wt-bf16'] / med['torch-bf16']:.2f}x")
print(f"wavetrain fp32 / torch fp32 = {med['wt-fp32'] / med['torch-fp32']:.2f}x")
print(f"torch bf16 autocast / torch fp32 = {med['torch-bf16'] / med['torch-fp32']:.2f}x")
EOF

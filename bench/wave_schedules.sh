#!/usr/bin/env bash
# Wavelet's model-parallel targets (issue 5), side by side on 2 ranks: waves against vanilla model
# parallelism (pipeline, microbatches = 1) and against GPipe (pipeline, microbatches = 4), with
# gang data parallelism on 2 ranks and on 1 rank as the reference for what 2 cores can give.
#
#   bench/wave_schedules.sh [--reps R] [--steps N] [--decks "inputs/a.toml inputs/b.toml"]
#                           [--configs "pipeline gpipe waves gang2 gang1"] [--trace] [--out DIR]
#
# Per repetition and deck the configurations run back to back, their order rotated each
# repetition, so drift in machine load hits them alike. Each run's throughput is the trainer's
# summary.json samples_per_s_median: samples per step (global batch x the global batches a step
# consumes: 2 for waves on 2 ranks) over the median step time, the first steps excluded. Printed:
# the median over repetitions per configuration, and the medians of the per-repetition ratios
# waves/pipeline (target >= 1.8) and waves/gpipe (target >= 1.1). Every schedule sees the deck's
# global batch per batch; gang2 runs 2 x that (the same per-rank batch), gang1 the deck's on 1 rank.
# --trace also writes trace.h5 (steps 10-20) in each run directory for analysis/summary.py.
# Environment as bench/trace_overhead.sh: OPENBLAS_CORETYPE as inherited (printed),
# OPENBLAS_NUM_THREADS=1, malloc trim/mmap 1e9, vader single copy off. WT_BUILD_DIR (default build).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
REPO=$PWD

REPS=3 STEPS=100 DECKS="inputs/text_transformer.toml" OUT="" TRACE=false
CONFIGS="pipeline gpipe waves gang2 gang1"
while (($#)); do
  case "$1" in
    --reps) REPS=$2; shift 2 ;;
    --steps) STEPS=$2; shift 2 ;;
    --decks | --deck) DECKS=$2; shift 2 ;;
    --configs) CONFIGS=$2; shift 2 ;;
    --trace) TRACE=true; shift ;;
    --out) OUT=$2; shift 2 ;;
    -h | --help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "error: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ $REPS =~ ^[1-9][0-9]*$ ]] || { echo "error: --reps must be a positive integer" >&2; exit 2; }
[[ $STEPS =~ ^[1-9][0-9]*$ && $STEPS -ge 20 ]] || { echo "error: --steps must be >= 20" >&2; exit 2; }
for c in $CONFIGS; do
  case $c in pipeline | gpipe | waves | gang2 | gang1) ;;
    *) echo "error: unknown configuration '$c' (pipeline gpipe waves gang2 gang1)" >&2; exit 2 ;;
  esac
done

BUILD=${WT_BUILD_DIR:-build}
[[ $BUILD == /* ]] || BUILD=$REPO/$BUILD
WAVETRAIN=$BUILD/wavetrain
PYTHON=/usr/bin/python3
[[ -x $WAVETRAIN ]] || { echo "error: $WAVETRAIN is not built" >&2; exit 1; }
for deck in $DECKS; do [[ -f $deck ]] || { echo "error: no deck $deck" >&2; exit 2; }; done

export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
export MALLOC_TRIM_THRESHOLD_=${MALLOC_TRIM_THRESHOLD_:-1000000000}
export MALLOC_MMAP_THRESHOLD_=${MALLOC_MMAP_THRESHOLD_:-1000000000}
export OMPI_MCA_btl_vader_single_copy_mechanism=${OMPI_MCA_btl_vader_single_copy_mechanism:-none}
[[ $(id -u) -eq 0 ]] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/wt-waves-bench.XXXXXX")}
mkdir -p "$OUT"
RESULTS=$OUT/results.jsonl
: >"$RESULTS"

# global_batch DECK: the deck's [train] global_batch.
global_batch() {
  "$PYTHON" -c 'import sys, tomllib; print(tomllib.load(open(sys.argv[1], "rb"))["train"]["global_batch"])' "$1"
}

# run DECK CONFIG REP: one run; appends {deck, config, rep, ranks, samples_per_s}.
run() {
  local deck=$1 config=$2 rep=$3 name ranks=2 batch
  name=$(basename "$deck" .toml)
  batch=$(global_batch "$deck")
  local dir=$OUT/$name-$config-$rep
  local cmd
  cmd=("$WAVETRAIN" "$REPO/$deck" --run-dir "$dir" --quiet --steps "$STEPS"
       --set train.epochs=1000 --set train.eval_every_epoch=false --set "trace.enabled=$TRACE")
  case $config in
    pipeline) cmd+=(--set schedule.kind=pipeline --set schedule.microbatches=1) ;;
    gpipe) cmd+=(--set schedule.kind=pipeline --set schedule.microbatches=4) ;;
    waves) cmd+=(--set schedule.kind=waves) ;;
    gang2) cmd+=(--set schedule.kind=gang --set "train.global_batch=$((2 * batch))") ;;
    gang1) ranks=1; cmd+=(--set schedule.kind=gang) ;;
  esac
  cmd=(mpirun -n "$ranks" "${cmd[@]}")
  rm -rf "$dir"
  "${cmd[@]}" >"$dir.log" 2>&1 || { echo "   failed: $name $config (log $dir.log)" >&2; return 1; }
  "$PYTHON" -c 'import json,sys; s=json.load(open(sys.argv[1])); print(json.dumps({"deck":sys.argv[2],"config":sys.argv[3],"rep":int(sys.argv[4]),"ranks":s["ranks"],"samples_per_s":s["samples_per_s_median"]}))' \
    "$dir/summary.json" "$name" "$config" "$rep" >>"$RESULTS"
}

read -r -a CONFIG_LIST <<<"$CONFIGS"
NC=${#CONFIG_LIST[@]}
echo "==> $REPS repetition(s), $STEPS steps per run, configurations: $CONFIGS;" \
     "OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-<unset>}; results in $OUT"
for ((rep = 0; rep < REPS; rep++)); do
  for deck in $DECKS; do
    order=()
    for ((k = 0; k < NC; k++)); do order+=("${CONFIG_LIST[(rep + k) % NC]}"); done
    echo "==> rep $((rep + 1)): $(basename "$deck" .toml): ${order[*]}"
    for config in "${order[@]}"; do run "$deck" "$config" "$rep"; done
  done
done

"$PYTHON" - "$RESULTS" <<'PY'
import json, os, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
by = {(r["deck"], r["config"], r["rep"]): r["samples_per_s"] for r in rows}
labels = {"pipeline": "pipeline M=1 (vanilla MP)", "gpipe": "pipeline M=4 (GPipe)",
          "waves": "waves", "gang2": "gang, 2 ranks (2x batch)", "gang1": "gang, 1 rank"}
print()
print(f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '<unset>')}; samples/s: median "
      "over repetitions (min-max); ratios: median of per-repetition ratios")
for deck in sorted({d for d, _, _ in by}):
    reps = sorted({r for d, _, r in by if d == deck})
    print(f"\n{deck}\n")
    print("| configuration | samples/s | min | max |")
    print("|---|---:|---:|---:|")
    for c in labels:
        vals = [by[(deck, c, r)] for r in reps if (deck, c, r) in by]
        if vals:
            print(f"| {labels[c]} | {statistics.median(vals):,.0f} | {min(vals):,.0f} | {max(vals):,.0f} |")
    print()
    for a, b, target in (("waves", "pipeline", 1.8), ("waves", "gpipe", 1.1),
                         ("gang2", "pipeline", None), ("waves", "gang2", None),
                         ("gang2", "gang1", None)):
        ratios = [by[(deck, a, r)] / by[(deck, b, r)] for r in reps
                  if (deck, a, r) in by and (deck, b, r) in by and by[(deck, b, r)] > 0]
        if ratios:
            t = f"  (target >= {target}: {'met' if statistics.median(ratios) >= target else 'NOT met'})" if target else ""
            print(f"{a}/{b}: {statistics.median(ratios):.3f}  [{', '.join(f'{x:.2f}' for x in ratios)}]{t}")
PY

#!/usr/bin/env bash
# What HDF5 tracing costs: wavetrain throughput with tracing off, with the [trace] window covering
# every measured step, and with the window outside them (never reached), side by side.
#
#   bench/trace_overhead.sh [--reps R] [--models "mlp lenet"] [--ranks "1 2"] [--out DIR]
#                           [--mlp-steps N] [--lenet-steps N]
#
# For every repetition, model and rank count the three configurations run back to back, their
# order rotated each repetition (off/inside/outside, inside/outside/off, ...), so drift in machine
# load hits all three alike. Two measures, both as ratios per repetition (inside/off,
# outside/off), then the median over repetitions:
#  - wall: summary.json samples_per_s_median (global batch / median step time, first steps
#    excluded); on a machine shared with other work this swings with the load;
#  - CPU: user+sys seconds of each rank (/usr/bin/time), less a 1-step run's (start-up, data
#    and model setup), per step: work done, insensitive to being descheduled. Reported as
#    "throughput" off_cpu/config_cpu, so < 1 means tracing costs. Environment as bench/compare_torch.sh:
# OPENBLAS_CORETYPE as inherited (printed), OPENBLAS_NUM_THREADS=1, malloc trim/mmap 1e9.
# WT_BUILD_DIR (default build). train.epochs is raised so that the step counts are not cut at
# the bench decks' one epoch (937 steps).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
REPO=$PWD

REPS=3 MODELS="mlp lenet" RANKS="1 2" OUT="" MLP_STEPS=2000 LENET_STEPS=200
while (($#)); do
  case "$1" in
    --reps) REPS=$2; shift 2 ;;
    --models) MODELS=$2; shift 2 ;;
    --ranks) RANKS=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --mlp-steps) MLP_STEPS=$2; shift 2 ;;
    --lenet-steps) LENET_STEPS=$2; shift 2 ;;
    -h | --help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "error: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

BUILD=${WT_BUILD_DIR:-build}
[[ $BUILD == /* ]] || BUILD=$REPO/$BUILD
WAVETRAIN=$BUILD/wavetrain
PYTHON=/usr/bin/python3
DATA=$REPO/data/fashion_mnist.h5
[[ -x $WAVETRAIN ]] || { echo "error: $WAVETRAIN is not built" >&2; exit 1; }
[[ -f $DATA ]] || { echo "error: $DATA is missing; tools/setup.sh creates it" >&2; exit 1; }

export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
export MALLOC_TRIM_THRESHOLD_=${MALLOC_TRIM_THRESHOLD_:-1000000000}
export MALLOC_MMAP_THRESHOLD_=${MALLOC_MMAP_THRESHOLD_:-1000000000}
export OMPI_MCA_btl_vader_single_copy_mechanism=${OMPI_MCA_btl_vader_single_copy_mechanism:-none}
[[ $(id -u) -eq 0 ]] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/wt-trace-bench.XXXXXX")}
mkdir -p "$OUT"
RESULTS=$OUT/results.jsonl
: >"$RESULTS"

# run MODEL RANKS CONFIG REP: one run; appends {model, ranks, config, rep, steps, samples_per_s,
# cpu_s (user+sys seconds, mean over ranks)}.
run() {
  local model=$1 ranks=$2 config=$3 rep=$4 steps
  [[ $model == mlp ]] && steps=$MLP_STEPS || steps=$LENET_STEPS
  [[ $config == startup ]] && steps=1
  local dir=$OUT/$model-$ranks-$config-$rep
  local cmd=(/usr/bin/time -a -o "$dir.cpu" -f "%U %S"
             "$WAVETRAIN" "$REPO/bench/decks/${model}_bench.toml" --set "data.path=\"$DATA\""
             --set "train.max_steps=$steps" --set train.epochs=1000 --run-dir "$dir" --quiet)
  case $config in
    off | startup) cmd+=(--set trace.enabled=false) ;;
    inside) cmd+=(--set trace.enabled=true --set trace.start_step=0 --set "trace.end_step=$steps") ;;
    outside) cmd+=(--set trace.enabled=true --set "trace.start_step=$((steps + 1000))"
                   --set "trace.end_step=$((steps + 1010))") ;;
  esac
  ((ranks > 1)) && cmd=(mpirun -n "$ranks" --oversubscribe "${cmd[@]}")
  rm -rf "$dir" "$dir.cpu"
  "${cmd[@]}" >"$dir.log" 2>&1 || { echo "   failed: $model $ranks $config (log $dir.log)" >&2; return 1; }
  if [[ $config == inside && ! -f $dir/trace.h5 ]]; then echo "   no trace.h5 in $dir" >&2; return 1; fi
  if [[ $config != inside && -e $dir/trace.h5 ]]; then echo "   unexpected $dir/trace.h5" >&2; return 1; fi
  "$PYTHON" -c 'import json,sys; s=json.load(open(sys.argv[1])); cpu=[sum(map(float,l.split())) for l in open(sys.argv[2]) if l.strip()]; assert len(cpu)==int(sys.argv[4]), cpu; print(json.dumps({"model":sys.argv[3],"ranks":int(sys.argv[4]),"config":sys.argv[5],"rep":int(sys.argv[6]),"steps":int(sys.argv[7]),"samples_per_s":s["samples_per_s_median"],"cpu_s":sum(cpu)/len(cpu)}))' \
    "$dir/summary.json" "$dir.cpu" "$model" "$ranks" "$config" "$rep" "$steps" >>"$RESULTS"
}

echo "==> $REPS repetition(s); mlp $MLP_STEPS steps, lenet $LENET_STEPS steps, global batch 64;" \
     "OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-<unset>}; results in $OUT"
CONFIGS=(off inside outside)
for ((rep = 0; rep < REPS; rep++)); do
  for model in $MODELS; do
    for ranks in $RANKS; do
      order=()
      for ((k = 0; k < 3; k++)); do order+=("${CONFIGS[(rep + k) % 3]}"); done
      echo "==> rep $((rep + 1)): $model on $ranks rank(s): ${order[*]}"
      for config in startup "${order[@]}"; do run "$model" "$ranks" "$config" "$rep"; done
    done
  done
done

"$PYTHON" - "$RESULTS" <<'PY'
import json, os, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
by = {(r["model"], r["ranks"], r["config"], r["rep"]): r for r in rows}
def cpu_per_step(r, rep, model, ranks):
    start = by.get((model, ranks, "startup", rep))
    return (r["cpu_s"] - start["cpu_s"]) / (r["steps"] - 1) if start else None
print()
print(f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '<unset>')}; medians over "
      "repetitions; ratios are medians of per-repetition ratios to 'off' (< 1: slower)")
print()
print("| model | ranks | wall samples/s off | inside/off | outside/off "
      "| CPU ms/step off | inside/off | outside/off |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
for model, ranks in sorted({(m, k) for m, k, _, _ in by}, key=lambda x: (x[0] != "mlp", x[1])):
    reps = sorted({r for m, k, _, r in by if (m, k) == (model, ranks)})
    def med(f):
        vals = [v for v in (f(r) for r in reps) if v is not None]
        return statistics.median(vals) if vals else float("nan")
    def get(c, rep):
        return by.get((model, ranks, c, rep))
    def wall_ratio(c, rep):
        a, b = get(c, rep), get("off", rep)
        return a["samples_per_s"] / b["samples_per_s"] if a and b else None
    def cpu(c, rep):
        a = get(c, rep)
        return cpu_per_step(a, rep, model, ranks) if a else None
    def cpu_ratio(c, rep):  # as throughput: off's CPU per step over this configuration's
        a, b = cpu(c, rep), cpu("off", rep)
        return b / a if a and b else None
    print(f"| {model} | {ranks} | {med(lambda r: get('off', r)['samples_per_s'] if get('off', r) else None):,.0f} "
          f"| {med(lambda r: wall_ratio('inside', r)):.3f} | {med(lambda r: wall_ratio('outside', r)):.3f} "
          f"| {1e3 * med(lambda r: cpu('off', r)):.3f} "
          f"| {med(lambda r: cpu_ratio('inside', r)):.3f} | {med(lambda r: cpu_ratio('outside', r)):.3f} |")
PY

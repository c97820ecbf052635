#!/usr/bin/env bash
# Two wavetrain binaries side by side (a change against the main it came from): the same decks on
# 1 and 2 ranks, the binaries alternating round by round so machine noise hits both alike; each
# run's steady rate is summary.json's samples_per_s_median. Prints per deck and rank count the
# median over rounds of each binary and new/old.
#   bench/compare_binaries.sh OLD_BINARY NEW_BINARY [--rounds 3] [--steps 300]
#       [--decks "bench/decks/lenet_bench.toml bench/decks/mlp_bench.toml"] [--ranks "1 2"]
# Build the old one from the commit it came from, e.g.
#   git worktree add /tmp/old <commit> && cmake -S /tmp/old -B /tmp/old/build && cmake --build ...
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
old=${1:?usage: $0 OLD_BINARY NEW_BINARY [options]}
new=${2:?usage: $0 OLD_BINARY NEW_BINARY [options]}
shift 2
rounds=3 steps=300 ranks="1 2"
decks="$here/bench/decks/lenet_bench.toml $here/bench/decks/mlp_bench.toml"
while (($#)); do
  case $1 in
    --rounds) rounds=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --decks) decks=$2; shift 2 ;;
    --ranks) ranks=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rate() {  # binary deck ranks
  local run="$work/run"
  rm -rf "$run"
  mpiexec -n "$3" "$1" "$2" --set checkpoint.every_steps=0 --set train.eval_every_epoch=false \
    --steps "$steps" --run-dir "$run" --quiet >/dev/null 2>&1
  sed -n 's/.*"samples_per_s_median": \([0-9.e+]*\).*/\1/p' "$run/summary.json"
}
median() { tr ' ' '\n' | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
echo "| deck | ranks | old samples/s | new samples/s | new/old | per round |"
echo "|---|---:|---:|---:|---:|---|"
for deck in $decks; do
  for n in $ranks; do
    olds=() news=() ratios=()
    for ((r = 0; r < rounds; ++r)); do
      if ((r % 2)); then b=$(rate "$new" "$deck" "$n"); a=$(rate "$old" "$deck" "$n")
      else a=$(rate "$old" "$deck" "$n"); b=$(rate "$new" "$deck" "$n"); fi
      olds+=("$a") news+=("$b") ratios+=("$(echo "scale=3; $b / $a" | bc)")
    done
    o=$(echo "${olds[*]}" | median) m=$(echo "${news[*]}" | median)
    printf "| %s | %s | %.0f | %.0f | %.3f | %s |\n" "$(basename "$deck" .toml)" "$n" "$o" "$m" \
      "$(echo "scale=4; $m / $o" | bc)" "${ratios[*]}"
  done
done

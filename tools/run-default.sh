#!/usr/bin/env bash
# Quick start #1: set up (idempotent), then train the default deck.
#   tools/run-default.sh [wavetrain options...]      e.g. --set train.epochs=2
#   WT_RANKS=2 tools/run-default.sh                   data parallel over 2 ranks
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash tools/setup.sh

RANKS=${WT_RANKS:-1}
MPIRUN_ARGS=(-n "$RANKS")
if [[ $(id -u) -eq 0 ]]; then
  # Open MPI refuses to start as root without these two.
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
# The shared-memory transport's single-copy (CMA) path is ~1.7x slower for allreduce here.
export OMPI_MCA_btl_vader_single_copy_mechanism=${OMPI_MCA_btl_vader_single_copy_mechanism:-none}
if ((RANKS > $(nproc))); then
  MPIRUN_ARGS+=(--oversubscribe)
fi

echo "==> training inputs/fashion_lenet.toml on $RANKS rank(s)"
exec mpirun "${MPIRUN_ARGS[@]}" build/wavetrain inputs/fashion_lenet.toml "$@"

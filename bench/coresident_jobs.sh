#!/usr/bin/env bash
# Two co-resident jobs of different models under one caching allocator: peak reserved against
# peak in use, alone, taking turns, and taking turns under a budget of 1.1x the peak in use.
# Usage: bench/coresident_jobs.sh [steps] [model A] [model B] [batch]   (needs a configured build/)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="${BUILD_DIR:-$here/../build}"
cmake --build "$build" --target coresident_jobs >/dev/null
OMP_NUM_THREADS=1 "$build/coresident_jobs" "$@"

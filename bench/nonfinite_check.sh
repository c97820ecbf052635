#!/usr/bin/env bash
# Builds bench/nonfinite_check.cpp with the project's release flags and runs it.
# Usage: bench/nonfinite_check.sh [repetitions]   (binary goes to build/bench/)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${BENCH_BUILD_DIR:-$here/../build/bench}"
mkdir -p "$out"
g++ -std=c++17 -O3 -march=native -DNDEBUG -I"$here/../src" "$here/nonfinite_check.cpp" \
  "$here/../src/ops/host/finite_check.cpp" -o "$out/nonfinite_check"
"$out/nonfinite_check" "${1:-200}"

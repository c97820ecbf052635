#!/usr/bin/env bash
# Builds bench/conv2d_dnnl.cpp against the host conv ops and oneDNN and runs it on one thread.
# Usage: bench/conv2d_dnnl.sh [repetitions]   (binary goes to build/bench/)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
src="$here/../src"
out="${BENCH_BUILD_DIR:-$here/../build/bench}"
mkdir -p "$out"
g++ -std=c++17 -O3 -march=native -DNDEBUG -DWT_GEMM_DNNL -I"$src" "$here/conv2d_dnnl.cpp" \
  "$src/ops/host/conv2d.cpp" "$src/ops/host/conv2d_dnnl.cpp" "$src/ops/host/gemm.cpp" \
  -o "$out/conv2d_dnnl" -ldnnl
OMP_NUM_THREADS=1 "$out/conv2d_dnnl" "${1:-20}"

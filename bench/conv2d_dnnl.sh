#!/usr/bin/env bash
# Builds bench/conv2d_dnnl.cpp against the host conv ops and oneDNN and runs it on one thread:
# LeNet's convolutions in FP32 and bf16, and the bf16 rounding into oneDNN's blocked layout.
# Usage: bench/conv2d_dnnl.sh [repetitions]   (binary goes to build/bench/)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
src="$here/../src"
out="${BENCH_BUILD_DIR:-$here/../build/bench}"
mkdir -p "$out"
kokkos_include=${KOKKOS_INCLUDE:-/usr/include/trilinos}
kokkos_lib=${KOKKOS_LIB:-trilinos_kokkoscore}
g++ -std=c++17 -O3 -march=native -DNDEBUG -DWT_GEMM_DNNL -I"$src" -isystem "$kokkos_include" \
  "$here/conv2d_dnnl.cpp" "$src/ops/host/conv2d.cpp" "$src/ops/host/conv2d_dnnl.cpp" \
  "$src/ops/host/gemm.cpp" "$src/ops/host/gemm_bf16.cpp" "$src/ops/host/bf16.cpp" \
  "$src/ops/host/elementwise.cpp" "$src/ops/precision.cpp" \
  -o "$out/conv2d_dnnl" -ldnnl -l"$kokkos_lib" -ldl
OMP_NUM_THREADS=1 "$out/conv2d_dnnl" "${1:-20}"

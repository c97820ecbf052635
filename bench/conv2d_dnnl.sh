#!/usr/bin/env bash
# Builds bench/conv2d_dnnl.cpp against the host conv ops and oneDNN and runs it on one thread:
# LeNet's convolutions in FP32 and bf16, and the bf16 rounding into oneDNN's blocked layout.
# Usage: bench/conv2d_dnnl.sh [repetitions]   (binary goes to build/bench/)
set -euo pipefail
source "$(dirname "$0")/host_bench_env.bash"  # here, src, out, kokkos_flags, kokkos_libs
g++ -std=c++17 -O3 -march=native -DNDEBUG -DWT_GEMM_DNNL -I"$src" "${kokkos_flags[@]}" \
  "$here/conv2d_dnnl.cpp" "$src/ops/host/conv2d.cpp" "$src/ops/host/conv2d_dnnl.cpp" \
  "$src/ops/host/gemm.cpp" "$src/ops/host/gemm_bf16.cpp" "$src/ops/host/bf16.cpp" \
  "$src/ops/host/elementwise.cpp" "$src/ops/precision.cpp" \
  -o "$out/conv2d_dnnl" -ldnnl "${kokkos_libs[@]}"
OMP_NUM_THREADS=1 "$out/conv2d_dnnl" "${1:-20}"

#!/usr/bin/env bash
# Builds bench/conv2d_winograd.cpp against the host conv ops and oneDNN and runs it on one
# thread: LeNet's conv2 by oneDNN's direct convolution and by F(2x2, 5x5) Winograd.
# Usage: bench/conv2d_winograd.sh [repetitions]   (binary goes to build/bench/)
set -euo pipefail
source "$(dirname "$0")/host_bench_env.bash"  # here, src, out, kokkos_flags, kokkos_libs
g++ -std=c++17 -O3 -march=native -ffp-contract=fast -DNDEBUG -DWT_GEMM_DNNL -I"$src" "${kokkos_flags[@]}" \
  "$here/conv2d_winograd.cpp" "$src/ops/host/conv2d_winograd.cpp" "$src/ops/host/conv2d_dnnl.cpp" \
  "$src/ops/host/gemm.cpp" "$src/ops/host/gemm_bf16.cpp" "$src/ops/host/bf16.cpp" \
  "$src/ops/host/elementwise.cpp" "$src/ops/precision.cpp" \
  -o "$out/conv2d_winograd" -ldnnl "${kokkos_libs[@]}"
OMP_NUM_THREADS=1 "$out/conv2d_winograd" "${1:-20}"

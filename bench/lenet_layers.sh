#!/usr/bin/env bash
# Builds bench/lenet_layers.cpp against the host ops and runs it on one core, once with the default
# CBLAS (OpenBLAS, with OPENBLAS_CORETYPE as set and unset) and once with oneDNN's sgemm if present.
# Usage: bench/lenet_layers.sh [repetitions] [cpu|wall]   (binaries go to build/bench/)
set -euo pipefail
source "$(dirname "$0")/host_bench_env.bash"  # here, src, out, kokkos_flags, kokkos_libs
reps="${1:-20}"
clock="${2:-cpu}"
files=("$here/lenet_layers.cpp" "$src/ops/host/conv2d.cpp" "$src/ops/host/pool2d.cpp"
       "$src/ops/host/gemm.cpp" "$src/ops/host/gemm_bf16.cpp" "$src/ops/host/bf16.cpp")
cxx=(g++ -std=c++17 -O3 -march=native -DNDEBUG -I"$src" "${kokkos_flags[@]}" "${files[@]}"
     "${kokkos_libs[@]}")
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1

"${cxx[@]}" -I/usr/include/x86_64-linux-gnu/openblas-pthread -o "$out/lenet_layers_openblas" -lopenblas
echo "## OpenBLAS, OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-<unset>}"
"$out/lenet_layers_openblas" "$reps" "$clock"
if [ -n "${OPENBLAS_CORETYPE:-}" ]; then
  echo; echo "## OpenBLAS, OPENBLAS_CORETYPE unset"
  env -u OPENBLAS_CORETYPE "$out/lenet_layers_openblas" "$reps" "$clock"
fi
if [ -f /usr/include/dnnl.h ]; then
  "${cxx[@]}" -DWT_GEMM_DNNL -o "$out/lenet_layers_dnnl" -ldnnl
  echo; echo "## oneDNN dnnl_sgemm"
  "$out/lenet_layers_dnnl" "$reps" "$clock"
fi

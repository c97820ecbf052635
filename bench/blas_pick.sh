#!/usr/bin/env bash
# Builds bench/blas_pick.cpp once per installed BLAS and runs each on one core.
# Usage: bench/blas_pick.sh [seconds-per-shape]   (binaries go to build/bench/)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${BENCH_BUILD_DIR:-$here/../build/bench}"
mkdir -p "$out"
secs="${1:-0.3}"
cxx=(g++ -std=c++17 -O2 -march=native "$here/blas_pick.cpp")
lib=/usr/lib/x86_64-linux-gnu
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 BLIS_NUM_THREADS=1 DNNL_VERBOSE=0

built=()
if [ -f $lib/openblas-pthread/libopenblas.so ] || [ -f $lib/libopenblas.so ]; then
  "${cxx[@]}" -DWT_BLAS_OPENBLAS -I/usr/include/x86_64-linux-gnu/openblas-pthread -o "$out/blas_pick_openblas" -lopenblas && built+=(openblas)
fi
if [ -f /usr/include/x86_64-linux-gnu/blis.h ] || [ -f /usr/include/blis/blis.h ]; then
  "${cxx[@]}" -DWT_BLAS_BLIS -I/usr/include/blis -o "$out/blas_pick_blis" -lblis -lpthread && built+=(blis)
fi
if [ -f /usr/include/dnnl.h ]; then
  "${cxx[@]}" -DWT_BLAS_DNNL -o "$out/blas_pick_dnnl" -ldnnl && built+=(dnnl)
fi
if [ -f /usr/include/libxsmm.h ] && [ -f /usr/lib/libxsmm.a ]; then
  # libxsmm hands shapes beyond its small-matrix limit to the BLAS it is linked with (OpenBLAS).
  "${cxx[@]}" -DWT_BLAS_XSMM -o "$out/blas_pick_xsmm" /usr/lib/libxsmmext.a /usr/lib/libxsmm.a \
    -lopenblas -lgomp -lpthread -ldl -lm && built+=(xsmm)
fi

echo "| library | setting | shape | GFLOP/s |"
echo "|---|---|---|---|"
for b in "${built[@]}"; do
  if [ "$b" = openblas ] || [ "$b" = xsmm ]; then
    OPENBLAS_CORETYPE=Haswell "$out/blas_pick_$b" "$secs" "OPENBLAS_CORETYPE=Haswell"
    env -u OPENBLAS_CORETYPE "$out/blas_pick_$b" "$secs" "OPENBLAS_CORETYPE unset"
  else
    "$out/blas_pick_$b" "$secs" "1 thread"
  fi
done

#!/usr/bin/env bash
# LeNet's max-pooling forward and fused ReLU backward on one core, with the compiler's preferred
# vector width as -march=native chooses it and at 128 bits (what src/CMakeLists.txt sets for
# ops/host/pool2d.cpp on x86), in interleaved rounds. Microseconds, the fastest of `reps` runs;
# the checksums must agree (bitwise the same gradients).
# Usage: bench/pool_vector_width.sh [rounds] [reps]   (binaries go to build/bench/)
set -euo pipefail
source "$(dirname "$0")/host_bench_env.bash"  # here, src, out, kokkos_flags, kokkos_libs
rounds="${1:-3}"
reps="${2:-100}"
cxx=(g++ -std=c++20 -O3 -march=native -DNDEBUG -I"$src" "${kokkos_flags[@]}")
"${cxx[@]}" -o "$out/pool_width_native" "$here/pool_vector_width.cpp" "$src/ops/host/pool2d.cpp" \
  "${kokkos_libs[@]}"
"${cxx[@]}" -mprefer-vector-width=128 -o "$out/pool_width_128" "$here/pool_vector_width.cpp" \
  "$src/ops/host/pool2d.cpp" "${kokkos_libs[@]}"
export OMP_NUM_THREADS=1
for round in $(seq "$rounds"); do
  for width in native 128; do
    echo "## round $round, vector width $width"
    echo "| shape | forward us | backward us | gradient checksum |"
    echo "|---|---:|---:|---:|"
    "$out/pool_width_$width" "$reps"
  done
done

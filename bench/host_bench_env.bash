# Sourced by the bench scripts that compile host sources themselves (not through CMake): sets
# here (bench/), src (src/) and out (build/bench/, or $BENCH_BUILD_DIR; created), and the Kokkos
# the build uses, Debian's unless KOKKOS_INCLUDE / KOKKOS_LIB say otherwise, as compiler flags
# (kokkos_flags) and link flags (kokkos_libs): the host kernels run through Kokkos (host_for).
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
src="$here/../src"
out="${BENCH_BUILD_DIR:-$here/../build/bench}"
mkdir -p "$out"
kokkos_flags=(-isystem "${KOKKOS_INCLUDE:-/usr/include/trilinos}")
kokkos_libs=(-l"${KOKKOS_LIB:-trilinos_kokkoscore}" -ldl)

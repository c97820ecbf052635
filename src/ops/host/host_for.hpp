#pragma once
// The host launchers of the portable kernels (ops/portable/): Kokkos parallel loops over Kokkos's
// default host execution space. Debian's Kokkos is Serial (one thread: a plain loop that the
// compiler vectorises); a cluster build of Kokkos with its OpenMP backend spreads the same
// kernels over a rank's threads (INSTALL). Only the rank's main thread runs kernels (Kokkos 3.4's
// Serial backend shares one scratch buffer).
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstdint>

namespace wt::ops {

using HostSpace = Kokkos::DefaultHostExecutionSpace;
using HostRange = Kokkos::RangePolicy<HostSpace, Kokkos::IndexType<int64_t>>;

template <class Body>
inline void host_for(const char* name, int64_t n, const Body& body) {
  Kokkos::parallel_for(name, HostRange(0, n), body);
}

// Threads the host kernels run on (1 with the Serial backend).
inline int host_threads() { return HostSpace::concurrency(); }

// An element kernel body(r, j) over a [rows, cols] matrix: rows in parallel, each row's columns
// in one vectorisable loop.
template <class Body>
inline void host_for_rows_cols(const char* name, int64_t rows, int64_t cols, const Body& body) {
  host_for(name, rows, [=](int64_t r) {
    for (int64_t j = 0; j < cols; ++j) body(r, j);
  });
}

// A column kernel body(r, j): every column takes its rows in increasing order. Threads split the
// columns into stripes of whole cache lines, and each walks all rows over its stripe, so memory
// is read row by row (as the plain loop did) while each column keeps its row order. On the Serial
// backend the one stripe is the whole row: the plain loop itself (narrow stripes measured 2.5x
// slower there: bench/README.md).
template <class Body>
inline void host_for_columns(const char* name, int64_t rows, int64_t cols, const Body& body) {
  constexpr int64_t kLine = 16;  // floats per cache line
  const int64_t lines = (cols + kLine - 1) / kLine;
  const int64_t stripes = std::max<int64_t>(1, std::min<int64_t>(host_threads(), lines));
  host_for(name, stripes, [=](int64_t stripe) {
    const int64_t begin = std::min(cols, stripe * lines / stripes * kLine);
    const int64_t end = std::min(cols, (stripe + 1) * lines / stripes * kLine);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = begin; j < end; ++j) body(r, j);
  });
}

}  // namespace wt::ops

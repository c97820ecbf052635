#pragma once
// The host kernels' loop: a Kokkos parallel_for over Kokkos's default host execution space.
// Debian's Kokkos is Serial (one thread: a plain loop that the compiler vectorises); a cluster
// build of Kokkos with its OpenMP backend spreads the same kernels over a rank's threads (INSTALL).
// Only the rank's main thread runs kernels (Kokkos 3.4's Serial backend shares one scratch buffer).
#include <Kokkos_Core.hpp>
#include <cstdint>

namespace wt::ops {

using HostSpace = Kokkos::DefaultHostExecutionSpace;

template <class Body>
inline void host_for(const char* name, int64_t n, const Body& body) {
  Kokkos::parallel_for(name, Kokkos::RangePolicy<HostSpace, Kokkos::IndexType<int64_t>>(0, n),
                       body);
}

// Threads the host kernels run on (1 with the Serial backend).
inline int host_threads() { return HostSpace::concurrency(); }

}  // namespace wt::ops

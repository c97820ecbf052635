#pragma once
// Kernels written once: each custom kernel of the ops interface is a small functor in this folder
// whose call operator is the work of one index (an element, a row, a column). The host backend
// runs it with Kokkos over the host execution space (ops/host/host_for.hpp); the CUDA backend
// runs the same functor with a grid-stride launch (ops/cuda/cuda_launch.cuh). Nothing here may
// use the standard library beyond what device code has: fixed-size types, arithmetic, and the
// helpers below.
//
// Why functors and not Kokkos views end to end: Debian's Kokkos is built for the host only, and
// a CUDA-enabled Kokkos is a separate build of a pinned release (INSTALL). WT_HD is what
// KOKKOS_INLINE_FUNCTION expands to in a CUDA build of Kokkos, so these functors run unchanged
// under Kokkos::parallel_for with a Cuda execution space too.
#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define WT_HD __host__ __device__ inline
#else
#define WT_HD inline
#endif

namespace wt::kern {

WT_HD float min_f(float a, float b) { return b < a ? b : a; }
WT_HD float max_f(float a, float b) { return a < b ? b : a; }

WT_HD int32_t float_bits(float x) {
#if defined(__CUDA_ARCH__)
  return __float_as_int(x);
#else
  int32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return bits;
#endif
}

WT_HD float bits_float(int32_t bits) {
#if defined(__CUDA_ARCH__)
  return __int_as_float(bits);
#else
  float x;
  std::memcpy(&x, &bits, sizeof x);
  return x;
#endif
}

}  // namespace wt::kern

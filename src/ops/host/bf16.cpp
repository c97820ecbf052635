#include "ops/host/bf16.hpp"

#include "ops/portable/bf16.hpp"

#if defined(__AVX512BF16__)
#include <immintrin.h>
#endif
#if defined(WT_GEMM_DNNL)
#include <dnnl.hpp>
#endif

namespace wt::ops {

uint16_t to_bf16(float x) { return kern::bf16_bits(x); }

float from_bf16(uint16_t h) { return kern::bf16_value(h); }

namespace {

// The row's conversion: 16 floats per vcvtneps2bf16 where the compiler targets AVX512-BF16.
// Both paths round to nearest even; the instruction also flushes denormals (below 1.2e-38) to
// zero, which activations and weights never reach.
void to_bf16_row(const float* x, int64_t n, uint16_t* y) {
  int64_t i = 0;
#if defined(__AVX512BF16__)
  for (; i + 16 <= n; i += 16) {
    const __m256bh h = _mm512_cvtneps_pbh(_mm512_loadu_ps(x + i));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i), reinterpret_cast<const __m256i&>(h));
  }
#endif
  for (; i < n; ++i) y[i] = to_bf16(x[i]);
}

}  // namespace

void to_bf16_rows(const float* x, int64_t rows, int64_t cols, int64_t ld_x, uint16_t* y) {
  for (int64_t r = 0; r < rows; ++r) to_bf16_row(x + r * ld_x, cols, y + r * cols);
}

void round_to_bf16(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = round_to_bf16(x[i]);
}

bool host_computes_bf16() {
#if defined(WT_GEMM_DNNL)
  const dnnl::cpu_isa isa = dnnl::get_effective_cpu_isa();
  return isa == dnnl::cpu_isa::avx512_core_bf16 || isa == dnnl::cpu_isa::avx512_core_amx;
#else
  return false;  // the CBLAS build has no bf16 kernels
#endif
}

const char* host_cpu_isa_name() {
#if defined(WT_GEMM_DNNL)
  switch (dnnl::get_effective_cpu_isa()) {
    case dnnl::cpu_isa::avx512_core_bf16:
      return "avx512_core_bf16";
    case dnnl::cpu_isa::avx512_core_amx:
      return "avx512_core_amx";
    case dnnl::cpu_isa::avx512_core_vnni:
      return "avx512_core_vnni";
    case dnnl::cpu_isa::avx512_core:
      return "avx512_core";
    case dnnl::cpu_isa::avx2:
      return "avx2";
    default:
      return "an ISA without bf16";
  }
#else
  return "a build without oneDNN";
#endif
}

}  // namespace wt::ops

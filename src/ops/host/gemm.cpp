#include "ops/host/gemm.hpp"

#include "ops/host/gemm_bf16.hpp"

// WT_GEMM_DNNL selects oneDNN's dnnl_sgemm (row-major, JIT-compiled AVX-512 kernels); it measured
// about twice OpenBLAS's single-core speed on LeNet's conv shapes (bench/README.md). The default is
// the CBLAS interface, which the build always has.
#if defined(WT_GEMM_DNNL)
#include <dnnl.h>
#else
#include <cblas.h>
#endif

namespace wt::ops {

void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
          int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
#if defined(WT_GEMM_DNNL)
  dnnl_sgemm(trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', m, n, k, alpha, a, lda, b, ldb, beta, c,
             ldc);
#else
  cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
              trans_b ? CblasTrans : CblasNoTrans, static_cast<int>(m), static_cast<int>(n),
              static_cast<int>(k), alpha, a, static_cast<int>(lda), b, static_cast<int>(ldb), beta,
              c, static_cast<int>(ldc));
#endif
}

void gemm(Precision precision, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
          float alpha, const float* a, int64_t lda, const float* b, int64_t ldb, float beta,
          float* c, int64_t ldc) {
  if (precision == Precision::Bf16)
    return gemm_bf16(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  gemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

const char* gemm_backend() {
#if defined(WT_GEMM_DNNL)
  return "oneDNN dnnl_sgemm";
#else
  return "CBLAS (OpenBLAS)";
#endif
}

}  // namespace wt::ops

#pragma once
// The one place the host BLAS is called. Every layer multiplies matrices through gemm(), so
// switching libraries (see bench/README.md for the measured choice) touches only gemm.cpp.
#include <cstdint>

#include "ops/precision.hpp"

namespace wt::ops {

// Row-major C[m, n] = alpha * op(A)[m, k] * op(B)[k, n] + beta * C, where op(X) is X or X^T.
// lda/ldb/ldc are the row strides of A, B and C as stored (A is [k, m] when trans_a).
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
          int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

// Dense convenience form: leading dimensions follow from the shapes.
inline void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                 const float* a, const float* b, float beta, float* c) {
  gemm(trans_a, trans_b, m, n, k, alpha, a, trans_a ? m : k, b, trans_b ? k : n, beta, c, n);
}

// gemm(), or with bf16 its bf16-input form (ops/host/gemm_bf16.hpp): the layers' products.
void gemm(Precision precision, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
          float alpha, const float* a, int64_t lda, const float* b, int64_t ldb, float beta,
          float* c, int64_t ldc);
inline void gemm(Precision precision, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
                 float alpha, const float* a, const float* b, float beta, float* c) {
  gemm(precision, trans_a, trans_b, m, n, k, alpha, a, trans_a ? m : k, b, trans_b ? k : n, beta, c,
       n);
}

// The library behind gemm(), for logs and benchmark reports.
const char* gemm_backend();

}  // namespace wt::ops

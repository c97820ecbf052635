#pragma once
// gemm() with bfloat16 inputs (train.precision = "bf16"): A and B rounded to bf16, products
// accumulated in FP32 and C read and written in FP32, through oneDNN's bf16 matmul (AVX512-BF16
// dot products). Same contract and layouts as ops/host/gemm.hpp's gemm().
#include <cstdint>

namespace wt::ops {

// Row-major C[m, n] = alpha * bf16(op(A)) * bf16(op(B)) + beta * C, FP32 accumulation.
void gemm_bf16(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
               const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
               int64_t ldc);

}  // namespace wt::ops

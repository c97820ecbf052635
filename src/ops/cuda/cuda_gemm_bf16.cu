// bf16 GEMMs of CudaOps (train.precision = "bf16"): A and B rounded to bf16 on the stream by the
// portable kernel the host uses too (ops/portable/bf16.hpp), then cuBLAS with CUDA_R_16BF inputs,
// CUBLAS_COMPUTE_32F accumulation and an FP32 C, the layout of the FP32 path unchanged.
#include "ops/cuda/cuda_launch.cuh"
#include "ops/cuda/cuda_ops_impl.cuh"
#include "ops/portable/bf16.hpp"

namespace wt::cuda {
namespace {

// Elements from an operand's first to its last in memory: op(X) is rows x cols, X row-major with
// leading dimension ld, `batch` of them stride apart. The copy keeps that layout, so the bf16
// GEMM takes the FP32 one's leading dimensions and strides.
int64_t span_of(bool trans, int64_t rows, int64_t cols, int64_t ld, int64_t stride, int64_t batch) {
  const int64_t one = trans ? (cols - 1) * ld + rows : (rows - 1) * ld + cols;
  return (batch - 1) * stride + one;
}

// cuBLAS wants its operands 16-byte aligned for tensor cores: B's copy starts on such a bound.
int64_t aligned_elements(int64_t n) { return (n + 7) / 8 * 8; }

}  // namespace

void CudaOps::Impl::gemm_bf16(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
                              float alpha, const float* a, int64_t lda, int64_t stride_a,
                              const float* b, int64_t ldb, int64_t stride_b, float beta, float* c,
                              int64_t ldc, int64_t stride_c, int64_t batch) {
  const int64_t a_n = span_of(trans_a, m, k, lda, stride_a, batch),
                b_n = span_of(trans_b, k, n, ldb, stride_b, batch);
  // Grown in the first step (its shapes repeat every step) and reused after on this stream.
  auto* a16 = static_cast<uint16_t*>(
      bf16_operands.at_least(size_t(aligned_elements(a_n) + b_n) * sizeof(uint16_t)));
  uint16_t* b16 = a16 + aligned_elements(a_n);
  if (k > 0) {
    cuda_for(stream, a_n, kern::ToBf16{a, a16});
    cuda_for(stream, b_n, kern::ToBf16{b, b16});
  }
  // Column-major cuBLAS: the row-major C = op(A) op(B) is C^T = op(B)^T op(A)^T (as gemm()).
  const cublasOperation_t op_b = trans_b ? CUBLAS_OP_T : CUBLAS_OP_N,
                          op_a = trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  if (batch == 1) {
    WT_CUBLAS_CHECK(cublasGemmEx(cublas, op_b, op_a, int(n), int(m), int(k), &alpha, b16,
                                 CUDA_R_16BF, int(ldb), a16, CUDA_R_16BF, int(lda), &beta, c,
                                 CUDA_R_32F, int(ldc), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    return;
  }
  WT_CUBLAS_CHECK(cublasGemmStridedBatchedEx(
      cublas, op_b, op_a, int(n), int(m), int(k), &alpha, b16, CUDA_R_16BF, int(ldb), stride_b, a16,
      CUDA_R_16BF, int(lda), stride_a, &beta, c, CUDA_R_32F, int(ldc), stride_c, int(batch),
      CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

}  // namespace wt::cuda

#pragma once
// GPU counterparts of the host ops: a cuBLAS GEMM with the host gemm()'s row-major convention,
// cuDNN 2-D convolution forward / backward-data / backward-filter / bias, and ReLU. All pointers
// are device pointers; work is queued on the stream given at construction. No CUDA header leaks out
// of this file, so core code can hold a CudaOps without the toolkit's include paths.
#include <cstddef>
#include <cstdint>
#include <memory>

#include "ops/host/conv2d.hpp"  // Conv2dGeometry: a plain struct, shared with the host path

namespace wt::cuda {

class CudaOps {
 public:
  // stream: a cudaStream_t (nullptr = the legacy default stream). Creates the cuBLAS and cuDNN
  // handles, bound to that stream. Throws std::runtime_error naming the failing call.
  explicit CudaOps(void* stream = nullptr);
  ~CudaOps();
  CudaOps(const CudaOps&) = delete;
  CudaOps& operator=(const CudaOps&) = delete;

  // Row-major C[m, n] = alpha * op(A)[m, k] * op(B)[k, n] + beta * C, as ops::gemm on the host.
  void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
            const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
            int64_t ldc);

  // y[N, OC, Ho, Wo] = conv(x, w[OC, C, k, k]) + bias[OC] (bias may be null).
  void conv2d_forward(const ops::Conv2dGeometry& g, const float* x, const float* w,
                      const float* bias, float* y);
  // Accumulates dw += dL/dw and dbias += dL/dbias (dbias may be null); overwrites dx when not null.
  void conv2d_backward(const ops::Conv2dGeometry& g, const float* x, const float* w,
                       const float* dy, float* dx, float* dw, float* dbias);

  void relu_forward(const float* x, float* y, int64_t n);
  // dx = dy where y > 0, else 0 (y is the forward output).
  void relu_backward(const float* y, const float* dy, float* dx, int64_t n);

  // Bytes of the cached cuDNN workspace (grown on demand, kept for reuse).
  size_t workspace_bytes() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace wt::cuda

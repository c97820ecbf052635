#include <cstring>

#include "ops/cuda/cuda_launch.cuh"
#include "ops/cuda/cuda_ops_impl.cuh"
#include "ops/portable/elementwise.hpp"
#include "ops/portable/rows.hpp"

namespace wt::cuda {

constexpr size_t kPartialsBytes = size_t(1) << 20;

CudaOps::CudaOps(void* stream, bool tf32, Precision precision) : impl_(std::make_unique<Impl>()) {
  impl_->stream = static_cast<cudaStream_t>(stream);
  impl_->tf32 = tf32;
  impl_->precision = precision;
  WT_CUBLAS_CHECK(cublasCreate(&impl_->cublas));
  WT_CUBLAS_CHECK(cublasSetStream(impl_->cublas, impl_->stream));
  // FP32 GEMMs stay FP32 unless TF32 is asked for: the host BLAS's precision.
  WT_CUBLAS_CHECK(
      cublasSetMathMode(impl_->cublas, tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH));
  WT_CUDNN_CHECK(cudnnCreate(&impl_->cudnn));
  WT_CUDNN_CHECK(cudnnSetStream(impl_->cudnn, impl_->stream));
  // Allocated here, never in a launch (a cudaMalloc would break a CUDA graph's capture); the
  // reductions size their grids to fit it (ops/portable/tree_reduce.hpp).
  WT_CUDA_CHECK(cudaMalloc(&impl_->partials.data, kPartialsBytes));
  impl_->partials.bytes = kPartialsBytes;
}

CudaOps::~CudaOps() {
  // No throwing from a destructor: a failure here is already reported by the work that failed.
  try {
    WT_CUDA_CHECK(cudaStreamSynchronize(impl_->stream));  // then no work uses the scratch
    for (DeviceScratch* scratch : {&impl_->workspace, &impl_->labels, &impl_->xent_rows,
                                   &impl_->flag, &impl_->bf16_operands})
      scratch->release();
    WT_CUDA_CHECK(cudaFree(impl_->partials.data));
  } catch (...) {
  }
  cudnnDestroy(impl_->cudnn);
  cublasDestroy(impl_->cublas);
}

void* CudaOps::stream() const { return impl_->stream; }
size_t CudaOps::workspace_bytes() const { return impl_->workspace.bytes(); }

void CudaOps::gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                   const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
                   int64_t ldc) const {
  if (m == 0 || n == 0) return;
  if (impl_->precision == Precision::Bf16)
    return impl_->gemm_bf16(trans_a, trans_b, m, n, k, alpha, a, lda, 0, b, ldb, 0, beta, c, ldc, 0,
                            1);
  // cuBLAS is column-major; a row-major C = op(A) op(B) is the column-major C^T = op(B)^T op(A)^T,
  // i.e. the same buffers with the operands swapped.
  WT_CUBLAS_CHECK(cublasSgemm(impl_->cublas, trans_b ? CUBLAS_OP_T : CUBLAS_OP_N,
                              trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, int(n), int(m), int(k), &alpha,
                              b, int(ldb), a, int(lda), &beta, c, int(ldc)));
}

void CudaOps::gemm_batched(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                           const float* a, int64_t lda, int64_t stride_a, const float* b,
                           int64_t ldb, int64_t stride_b, float beta, float* c, int64_t ldc,
                           int64_t stride_c, int64_t batch) const {
  if (m == 0 || n == 0 || batch == 0) return;
  if (impl_->precision == Precision::Bf16)
    return impl_->gemm_bf16(trans_a, trans_b, m, n, k, alpha, a, lda, stride_a, b, ldb, stride_b,
                            beta, c, ldc, stride_c, batch);
  // Row-major as gemm(): the operands swapped for column-major cuBLAS.
  WT_CUBLAS_CHECK(cublasSgemmStridedBatched(impl_->cublas, trans_b ? CUBLAS_OP_T : CUBLAS_OP_N,
                                            trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, int(n), int(m),
                                            int(k), &alpha, b, int(ldb), stride_b, a, int(lda),
                                            stride_a, &beta, c, int(ldc), stride_c, int(batch)));
}

// As the host (ops/host/linear.cpp): the bias broadcast into y, then the GEMM adds onto it.
void CudaOps::linear_forward(const float* x, const float* w, const float* b, int64_t rows,
                             int64_t in, int64_t out, float* y) const {
  if (b) cuda_for_rows_cols(impl_->stream, rows, out, kern::BroadcastRow{b, out, y});
  OpsBackend::gemm(false, true, rows, out, in, 1.0f, x, w, b ? 1.0f : 0.0f, y);
}

void CudaOps::linear_backward(const float* x, const float* w, const float* dy, int64_t rows,
                              int64_t in, int64_t out, float* dw, float* db, float* dx) const {
  OpsBackend::gemm(true, false, out, in, rows, 1.0f, dy, x, 1.0f, dw);
  if (db) add_column_sums(dy, rows, out, db);
  if (dx) OpsBackend::gemm(false, false, rows, in, out, 1.0f, dy, w, 0.0f, dx);
}

void CudaOps::relu_forward(const float* x, float* y, int64_t n) const {
  cuda_for4(impl_->stream, n, kern::ReluForward{x, y});
}

void CudaOps::relu_backward(const float* y, const float* dy, float* dx, int64_t n) const {
  cuda_for4(impl_->stream, n, kern::ReluBackward{y, dy, dx});
}

// The fused epilogues: the product (cuBLAS, cuDNN) without its bias, then the bias and the ReLU in
// one pass (rows.hpp's AddRowRelu, AddChannelBiasRelu), where the unfused ops made three; the
// column sums after the mask. The same additions as a bias add and a ReLU after the product.
void CudaOps::linear_relu_forward(const float* x, const float* w, const float* b, int64_t rows,
                                  int64_t in, int64_t out, float* y) const {
  if (!b) {
    linear_forward(x, w, nullptr, rows, in, out, y);
    return relu_forward(y, y, rows * out);
  }
  OpsBackend::gemm(false, true, rows, out, in, 1.0f, x, w, 0.0f, y);
  cuda_for_rows_cols(impl_->stream, rows, out, kern::AddRowRelu{b, out, y});
}

void CudaOps::conv2d_relu_forward(const ops::Conv2dGeometry& g, const float* x, const float* w,
                                  const float* bias, float* y, const Scratch& scratch) const {
  conv2d_forward(g, x, w, nullptr, y, scratch);
  const int64_t planes = g.batch * g.out_channels, pixels = g.out_pixels();
  if (!bias) return relu_forward(y, y, planes * pixels);
  cuda_for_planes(impl_->stream, planes, pixels,
                  kern::AddChannelBiasRelu{bias, g.out_channels, pixels, y});
}

void CudaOps::relu_backward_column_sums(const float* y, const float* dy, int64_t rows,
                                        int64_t width, float* dx, float* sums) const {
  relu_backward(y, dy, dx, rows * width);
  add_column_sums(dx, rows, width, sums);
}

void CudaOps::gelu_forward(const float* x, float* y, int64_t n) const {
  cuda_for4(impl_->stream, n, kern::GeluForward{x, y});
}

void CudaOps::gelu_backward(const float* x, const float* dy, float* dx, int64_t n) const {
  cuda_for4(impl_->stream, n, kern::GeluBackward{x, dy, dx});
}

void CudaOps::sum_arrays(const float* const* xs, int count, float* y, int64_t n) const {
  if (count == 1) return copy(xs[0], y, n);
  cuda_for4(impl_->stream, n, kern::Add{xs[0], xs[1], y});
  for (int k = 2; k < count; ++k) accumulate(xs[k], y, n);
}

void CudaOps::scale(const float* x, float s, float* y, int64_t n) const {
  cuda_for4(impl_->stream, n, kern::Scale{x, s, y});
}

void CudaOps::accumulate(const float* x, float* y, int64_t n) const {
  cuda_for4(impl_->stream, n, kern::Accumulate{x, y});
}

void CudaOps::scale_in_place(float s, float* y, int64_t n) const {
  cuda_for4(impl_->stream, n, kern::ScaleInPlace{s, y});
}

void CudaOps::multiply(const float* a, const float* b, float* y, int64_t n) const {
  cuda_for4(impl_->stream, n, kern::Multiply{a, b, y});
}

// Zeroing (every step's gradients) as a memset, the driver's bandwidth-bound fill, a memset node in
// a captured graph; other values (and -0.0f, whose bits are not zero) by the kernel.
void CudaOps::fill(float value, float* y, int64_t n) const {
  uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  if (bits == 0 && n > 0) {
    WT_CUDA_CHECK(cudaMemsetAsync(y, 0, size_t(n) * sizeof(float), impl_->stream));
    return;
  }
  cuda_for(impl_->stream, n, kern::Fill{value, y});
}

void CudaOps::copy(const float* x, float* y, int64_t n) const {
  if (n > 0 && x != y)
    WT_CUDA_CHECK(
        cudaMemcpyAsync(y, x, size_t(n) * sizeof(float), cudaMemcpyDeviceToDevice, impl_->stream));
}

void CudaOps::dequantize_u8(const uint8_t* x, int64_t n, int64_t row, int64_t group,
                            const float* table, float* y) const {
  cuda_for(impl_->stream, n, kern::DequantizeU8{x, row, group, table, y});
}

void CudaOps::scale_by(const float* x, const float* s, float factor, float* y, int64_t n) const {
  cuda_for(impl_->stream, n, kern::ScaleByDeviceScalar{x, s, factor, y});
}

void CudaOps::dropout_masks(const ops::DropoutMasks& d, float* mask) const {
  // d.step_key, when set, is pinned host memory: mapped, the kernel reads it at run time.
  cuda_for(impl_->stream, d.rows * ((d.per_row + 1) / 2), kern::dropout_masks(d, mask));
}

}  // namespace wt::cuda

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <stdexcept>
#include <string>

#include "ops/cuda/cuda_ops.hpp"
#include "util/cuda_check.hpp"

namespace wt::cuda {
namespace {

int to_int(int64_t v) { return static_cast<int>(v); }

// The four descriptors of one convolution, created for the call and destroyed with it (creating
// them costs microseconds, far below a convolution; caching them would only add state).
struct ConvDescriptors {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr, bias = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;

  explicit ConvDescriptors(const ops::Conv2dGeometry& g) {
    WT_CUDNN_CHECK(cudnnCreateTensorDescriptor(&x));
    WT_CUDNN_CHECK(cudnnCreateTensorDescriptor(&y));
    WT_CUDNN_CHECK(cudnnCreateTensorDescriptor(&bias));
    WT_CUDNN_CHECK(cudnnCreateFilterDescriptor(&w));
    WT_CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&conv));
    WT_CUDNN_CHECK(cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT,
                                              to_int(g.batch), to_int(g.in_channels),
                                              to_int(g.in_h), to_int(g.in_w)));
    WT_CUDNN_CHECK(cudnnSetTensor4dDescriptor(y, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT,
                                              to_int(g.batch), to_int(g.out_channels),
                                              to_int(g.out_h()), to_int(g.out_w())));
    WT_CUDNN_CHECK(cudnnSetTensor4dDescriptor(bias, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1,
                                              to_int(g.out_channels), 1, 1));
    WT_CUDNN_CHECK(cudnnSetFilter4dDescriptor(w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW,
                                              to_int(g.out_channels), to_int(g.in_channels),
                                              to_int(g.kernel), to_int(g.kernel)));
    WT_CUDNN_CHECK(cudnnSetConvolution2dDescriptor(conv, to_int(g.padding), to_int(g.padding),
                                                   to_int(g.stride), to_int(g.stride), 1, 1,
                                                   CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    // Plain FP32 (no TF32), so GPU results match the host path to float rounding.
    WT_CUDNN_CHECK(cudnnSetConvolutionMathType(conv, CUDNN_FMA_MATH));
  }
  ~ConvDescriptors() {
    cudnnDestroyConvolutionDescriptor(conv);
    cudnnDestroyFilterDescriptor(w);
    cudnnDestroyTensorDescriptor(bias);
    cudnnDestroyTensorDescriptor(y);
    cudnnDestroyTensorDescriptor(x);
  }
  ConvDescriptors(const ConvDescriptors&) = delete;
  ConvDescriptors& operator=(const ConvDescriptors&) = delete;
};

__global__ void relu_forward_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

__global__ void relu_backward_kernel(const float* __restrict__ y, const float* __restrict__ dy,
                                     float* __restrict__ dx, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    dx[i] = y[i] > 0.0f ? dy[i] : 0.0f;
}

constexpr int kThreads = 256;
int blocks_for(int64_t n) {
  const int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<int>(b < 65535 ? (b > 0 ? b : 1) : 65535);  // grid-stride loops cover the rest
}

}  // namespace

struct CudaOps::Impl {
  cudaStream_t stream = nullptr;
  cublasHandle_t cublas = nullptr;
  cudnnHandle_t cudnn = nullptr;
  void* workspace = nullptr;
  size_t workspace_size = 0;

  // A workspace of at least `bytes`, reallocated only when a call needs more than any before.
  void* workspace_of(size_t bytes) {
    if (bytes > workspace_size) {
      if (workspace) {
        // The previous buffer may still be in use by queued work on this stream.
        WT_CUDA_CHECK(cudaStreamSynchronize(stream));
        WT_CUDA_CHECK(cudaFree(workspace));
        workspace = nullptr;
        workspace_size = 0;
      }
      WT_CUDA_CHECK(cudaMalloc(&workspace, bytes));
      workspace_size = bytes;
    }
    return workspace;
  }
};

CudaOps::CudaOps(void* stream) : impl_(std::make_unique<Impl>()) {
  impl_->stream = static_cast<cudaStream_t>(stream);
  WT_CUBLAS_CHECK(cublasCreate(&impl_->cublas));
  WT_CUBLAS_CHECK(cublasSetStream(impl_->cublas, impl_->stream));
  // FP32 GEMMs stay FP32 (no TF32 tensor-core shortcut), like the host BLAS.
  WT_CUBLAS_CHECK(cublasSetMathMode(impl_->cublas, CUBLAS_DEFAULT_MATH));
  WT_CUDNN_CHECK(cudnnCreate(&impl_->cudnn));
  WT_CUDNN_CHECK(cudnnSetStream(impl_->cudnn, impl_->stream));
}

CudaOps::~CudaOps() {
  if (impl_->workspace) {
    cudaStreamSynchronize(impl_->stream);
    cudaFree(impl_->workspace);
  }
  cudnnDestroy(impl_->cudnn);
  cublasDestroy(impl_->cublas);
}

size_t CudaOps::workspace_bytes() const { return impl_->workspace_size; }

void CudaOps::gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                   const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
                   int64_t ldc) {
  if (m == 0 || n == 0) return;
  // cuBLAS is column-major; a row-major C = op(A) op(B) is the column-major C^T = op(B)^T op(A)^T,
  // i.e. the same buffers with the operands swapped.
  WT_CUBLAS_CHECK(cublasSgemm(impl_->cublas, trans_b ? CUBLAS_OP_T : CUBLAS_OP_N,
                              trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, to_int(n), to_int(m), to_int(k),
                              &alpha, b, to_int(ldb), a, to_int(lda), &beta, c, to_int(ldc)));
}

void CudaOps::conv2d_forward(const ops::Conv2dGeometry& g, const float* x, const float* w,
                             const float* bias, float* y) {
  ConvDescriptors d(g);
  cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
  int returned = 0;
  WT_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(
      impl_->cudnn, d.x, d.w, d.conv, d.y, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &returned, perf));
  if (returned < 1) throw std::runtime_error("cuDNN offers no forward convolution algorithm");
  const cudnnConvolutionFwdAlgo_t algo = perf[0].algo;
  size_t bytes = 0;
  WT_CUDNN_CHECK(
      cudnnGetConvolutionForwardWorkspaceSize(impl_->cudnn, d.x, d.w, d.conv, d.y, algo, &bytes));
  void* ws = bytes ? impl_->workspace_of(bytes) : nullptr;
  const float one = 1.0f, zero = 0.0f;
  WT_CUDNN_CHECK(cudnnConvolutionForward(impl_->cudnn, &one, d.x, x, d.w, w, d.conv, algo, ws,
                                         bytes, &zero, d.y, y));
  if (bias) WT_CUDNN_CHECK(cudnnAddTensor(impl_->cudnn, &one, d.bias, bias, &one, d.y, y));
}

void CudaOps::conv2d_backward(const ops::Conv2dGeometry& g, const float* x, const float* w,
                              const float* dy, float* dx, float* dw, float* dbias) {
  ConvDescriptors d(g);
  const float one = 1.0f, zero = 0.0f;
  // Parameter gradients accumulate (beta = 1): the executor zeroes them once per step.
  {
    cudnnConvolutionBwdFilterAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
    int returned = 0;
    WT_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(
        impl_->cudnn, d.x, d.y, d.conv, d.w, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &returned,
        perf));
    if (returned < 1) throw std::runtime_error("cuDNN offers no backward-filter algorithm");
    size_t bytes = 0;
    WT_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterWorkspaceSize(impl_->cudnn, d.x, d.y, d.conv,
                                                                  d.w, perf[0].algo, &bytes));
    void* ws = bytes ? impl_->workspace_of(bytes) : nullptr;
    WT_CUDNN_CHECK(cudnnConvolutionBackwardFilter(impl_->cudnn, &one, d.x, x, d.y, dy, d.conv,
                                                  perf[0].algo, ws, bytes, &one, d.w, dw));
  }
  if (dbias)
    WT_CUDNN_CHECK(cudnnConvolutionBackwardBias(impl_->cudnn, &one, d.y, dy, &one, d.bias, dbias));
  if (dx) {
    cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
    int returned = 0;
    WT_CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7(
        impl_->cudnn, d.w, d.y, d.conv, d.x, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &returned,
        perf));
    if (returned < 1) throw std::runtime_error("cuDNN offers no backward-data algorithm");
    size_t bytes = 0;
    WT_CUDNN_CHECK(cudnnGetConvolutionBackwardDataWorkspaceSize(impl_->cudnn, d.w, d.y, d.conv, d.x,
                                                                perf[0].algo, &bytes));
    void* ws = bytes ? impl_->workspace_of(bytes) : nullptr;
    WT_CUDNN_CHECK(cudnnConvolutionBackwardData(impl_->cudnn, &one, d.w, w, d.y, dy, d.conv,
                                                perf[0].algo, ws, bytes, &zero, d.x, dx));
  }
}

void CudaOps::relu_forward(const float* x, float* y, int64_t n) {
  if (n == 0) return;
  relu_forward_kernel<<<blocks_for(n), kThreads, 0, impl_->stream>>>(x, y, n);
  WT_CUDA_CHECK(cudaGetLastError());
}

void CudaOps::relu_backward(const float* y, const float* dy, float* dx, int64_t n) {
  if (n == 0) return;
  relu_backward_kernel<<<blocks_for(n), kThreads, 0, impl_->stream>>>(y, dy, dx, n);
  WT_CUDA_CHECK(cudaGetLastError());
}

}  // namespace wt::cuda

#pragma once
// CudaOps's state (CUDA builds' .cu files only): the stream and library handles, the cached
// convolution algorithms, small buffers that are grown on demand and then reused, and the
// reductions' fixed partials buffer.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <array>
#include <map>
#include <stdexcept>
#include <string>

#include "mem/caching_allocator.hpp"
#include "ops/cuda/cuda_ops.hpp"
#include "ops/cuda/cuda_reduce.cuh"
#include "ops/growing_buffer.hpp"
#include "util/cuda_check.hpp"

namespace wt::cuda {

// One convolution shape's algorithms, chosen once by cuDNN's heuristics, and their workspaces.
struct ConvPlan {
  cudnnConvolutionFwdAlgo_t forward{};
  cudnnConvolutionBwdDataAlgo_t backward_data{};
  cudnnConvolutionBwdFilterAlgo_t backward_filter{};
  size_t forward_bytes = 0, backward_bytes = 0;  // backward: the larger of data and filter
};

using ConvKey = std::array<int64_t, 9>;  // the geometry and the precision

// cudaMalloc'd scratch that only grows and keeps its earlier storage until the ops object goes
// (ops/growing_buffer.hpp: captured graphs may still address it). Reuse is safe because everything
// using one buffer is queued on the ops' one stream.
struct CudaMemory {
  static void* allocate(size_t bytes) {
    void* p = nullptr;
    const cudaError_t rc = cudaMalloc(&p, bytes);
    if (rc == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();  // not left for the next launch's check to report
      throw OutOfMemory(
          "out of device memory: " + std::to_string(bytes) +
              " bytes of the ops' scratch (staged labels, the loss's rows, bf16 "
              "operands or a convolution's workspace, not counted in device.memory_limit)",
          bytes);
    }
    WT_CUDA_CHECK(rc);
    return p;
  }
  static void free(void* p) { cudaFree(p); }  // only after the stream's work is done
};
using DeviceScratch = GrowingBuffer<CudaMemory>;

// Whether `stream`'s work is being captured into a graph now.
inline bool stream_capturing(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  WT_CUDA_CHECK(cudaStreamIsCapturing(stream, &status));
  return status != cudaStreamCaptureStatusNone;
}
// What a kernel call may not do in a capture (`what`, named in the logic_error): work a replay,
// which runs none of the call's host code, would not repeat, or a synchronisation.
inline void refuse_in_capture_on(cudaStream_t stream, const char* what) {
  if (stream_capturing(stream))
    throw std::logic_error(std::string("cuda: ") + what +
                           " while a step is captured as a graph (device.cuda_graphs)");
}

struct CudaOps::Impl {
  cudaStream_t stream = nullptr;
  cublasHandle_t cublas = nullptr;
  cudnnHandle_t cudnn = nullptr;
  bool tf32 = false;
  Precision precision = Precision::Fp32;
  std::map<ConvKey, ConvPlan> conv_plans;
  DeviceScratch workspace;      // convolutions called without scratch
  DeviceScratch labels;         // the loss's labels, staged from host memory
  DeviceScratch xent_rows;      // the loss's per-row losses and hits, before their sum
  DeviceScratch flag;           // a kernel's answer that host code must see (token id checks)
  DeviceScratch bf16_operands;  // bf16 copies of a GEMM's A and B (cuda_gemm_bf16.cu)
  Partials partials;            // the reductions' block partials: made with the object, fixed size

  const ConvPlan& conv_plan(const ops::Conv2dGeometry& g);
  bool capturing() const { return stream_capturing(stream); }
  void refuse_in_capture(const char* what) const { refuse_in_capture_on(stream, what); }
  // The strided-batched row-major GEMM with A and B rounded to bf16 and FP32 accumulation and C
  // (batch 1: one GEMM; strides unused).
  void gemm_bf16(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                 const float* a, int64_t lda, int64_t stride_a, const float* b, int64_t ldb,
                 int64_t stride_b, float beta, float* c, int64_t ldc, int64_t stride_c,
                 int64_t batch);
};

}  // namespace wt::cuda

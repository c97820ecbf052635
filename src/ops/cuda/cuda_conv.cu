// Convolutions of CudaOps: cuDNN, with each shape's algorithms chosen once (cuDNN's heuristics)
// and cached, and the workspace taken from the caller's scratch (the device's allocator, or
// memory the issuing host code reserved), so a replayed step allocates nothing. Under bf16
// (train.precision) the inputs are rounded into bf16 copies in that scratch and cuDNN runs its
// BFLOAT16 configuration (FP32 compute); the legacy API has no bf16-in/FP32-out configuration,
// so its outputs come back as bf16 and are widened to FP32 (the bias and its gradient stay FP32).
#include <algorithm>
#include <stdexcept>
#include <string>

#include "ops/cuda/cuda_launch.cuh"
#include "ops/cuda/cuda_ops_impl.cuh"
#include "ops/portable/bf16.hpp"

namespace wt::cuda {
namespace {

int to_int(int64_t v) { return static_cast<int>(v); }

// The four descriptors of one convolution, created for the call and destroyed with it (creating
// them costs microseconds, far below a convolution; caching them would only add state).
struct ConvDescriptors {
  // x, y, w: what the convolution reads and writes (bf16 under bf16); y32: the FP32 output, for
  // the bias.
  cudnnTensorDescriptor_t x = nullptr, y = nullptr, y32 = nullptr, bias = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;

  ConvDescriptors(const ops::Conv2dGeometry& g, bool tf32, Precision precision) {
    const cudnnDataType_t io =
        precision == Precision::Bf16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_FLOAT;
    WT_CUDNN_CHECK(cudnnCreateTensorDescriptor(&x));
    WT_CUDNN_CHECK(cudnnCreateTensorDescriptor(&y));
    WT_CUDNN_CHECK(cudnnCreateTensorDescriptor(&y32));
    WT_CUDNN_CHECK(cudnnCreateTensorDescriptor(&bias));
    WT_CUDNN_CHECK(cudnnCreateFilterDescriptor(&w));
    WT_CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&conv));
    WT_CUDNN_CHECK(cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, io, to_int(g.batch),
                                              to_int(g.in_channels), to_int(g.in_h),
                                              to_int(g.in_w)));
    for (cudnnTensorDescriptor_t out : {y, y32})
      WT_CUDNN_CHECK(cudnnSetTensor4dDescriptor(
          out, CUDNN_TENSOR_NCHW, out == y ? io : CUDNN_DATA_FLOAT, to_int(g.batch),
          to_int(g.out_channels), to_int(g.out_h()), to_int(g.out_w())));
    WT_CUDNN_CHECK(cudnnSetTensor4dDescriptor(bias, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1,
                                              to_int(g.out_channels), 1, 1));
    WT_CUDNN_CHECK(cudnnSetFilter4dDescriptor(w, io, CUDNN_TENSOR_NCHW, to_int(g.out_channels),
                                              to_int(g.in_channels), to_int(g.kernel),
                                              to_int(g.kernel)));
    WT_CUDNN_CHECK(cudnnSetConvolution2dDescriptor(conv, to_int(g.padding), to_int(g.padding),
                                                   to_int(g.stride), to_int(g.stride), 1, 1,
                                                   CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    // Plain FP32 unless TF32 is allowed (device.tf32), so results match the host's to rounding;
    // bf16 runs on tensor cores.
    const bool tensor_cores = tf32 || precision == Precision::Bf16;
    WT_CUDNN_CHECK(
        cudnnSetConvolutionMathType(conv, tensor_cores ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH));
  }
  ~ConvDescriptors() {
    cudnnDestroyConvolutionDescriptor(conv);
    cudnnDestroyFilterDescriptor(w);
    cudnnDestroyTensorDescriptor(bias);
    cudnnDestroyTensorDescriptor(y32);
    cudnnDestroyTensorDescriptor(y);
    cudnnDestroyTensorDescriptor(x);
  }
  ConvDescriptors(const ConvDescriptors&) = delete;
  ConvDescriptors& operator=(const ConvDescriptors&) = delete;
};

ConvKey key_of(const ops::Conv2dGeometry& g, Precision precision) {
  return {g.batch,   g.in_channels,     g.in_h, g.in_w, g.out_channels, g.kernel, g.stride,
          g.padding, int64_t(precision)};
}

// The bf16 copies a call makes, after the cuDNN workspace in its scratch: x, w and y (dy) rounded
// for cuDNN, and the backward's bf16 dx and dw before they are widened.
struct Bf16Copies {
  int64_t x = 0, w = 0, y = 0;  // elements
  explicit Bf16Copies(const ops::Conv2dGeometry& g)
      : x(g.batch * g.in_channels * g.in_h * g.in_w),
        w(g.out_channels * g.in_channels * g.kernel * g.kernel),
        y(g.batch * g.out_channels * g.out_pixels()) {}
  static size_t aligned(size_t bytes) { return (bytes + 255) / 256 * 256; }
  size_t bytes() const { return aligned(size_t(2 * x + 2 * w + y) * sizeof(uint16_t)); }
  // The copies at `base` in that order: x, w, y, dx, dw.
  uint16_t* at(void* base, int which) const {
    const int64_t offsets[] = {0, x, x + w, x + w + y, 2 * x + w + y};
    return static_cast<uint16_t*>(base) + offsets[which];
  }
};
enum Bf16Copy { kX16, kW16, kY16, kDx16, kDw16 };

// The scratch a call uses: reserved memory (a layer's: LayerContext::workspace), else, for
// callers outside a training step (tests, tools), a tensor from the allocator held for the call
// (freed on the stream, so the queued convolution keeps it), else the ops' own workspace. Never
// the allocator in a captured step: a replay runs none of this host code, so the allocation
// would be in the capture and missing from every replay. (The ops' own workspace, grown by an
// earlier call of the same shape, is the same buffer in every replay: the op benchmark's graphs.)
struct ConvScratch {
  Tensor held;
  void* data = nullptr;
  ConvScratch(const Scratch& scratch, size_t bytes, cudaStream_t stream, DeviceScratch& fallback) {
    if (bytes == 0) return;
    if (scratch.reserved) {
      data = scratch.reserved;
    } else if (scratch.memory) {
      refuse_in_capture_on(stream, "a convolution taking its workspace from the allocator");
      held = scratch.floats(int64_t((bytes + sizeof(float) - 1) / sizeof(float)));
      data = held.device_ptr();  // issued, not touched: host code here
    } else {
      data = fallback.at_least(bytes);
    }
  }
};

// cuDNN's fastest algorithm by its heuristics among the deterministic ones: the backward ones it
// ranks first often add with atomics, in the order blocks finish, and then two runs of the same
// deck differ (tick-tock on an H200: 1.4% in the loss after 200 steps), as would a step with
// CUDA graphs on and off.
template <class Perf>
auto deterministic_choice(const Perf* perf, int returned, const char* what,
                          const ops::Conv2dGeometry& g) {
  for (int i = 0; i < returned; ++i)
    if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].determinism == CUDNN_DETERMINISTIC)
      return perf[i].algo;
  throw std::runtime_error(std::string("cuDNN offers no deterministic ") + what +
                           " algorithm for conv2d on [" + std::to_string(g.batch) + ", " +
                           std::to_string(g.in_channels) + ", " + std::to_string(g.in_h) + ", " +
                           std::to_string(g.in_w) + "] -> " + std::to_string(g.out_channels) +
                           " channels, kernel " + std::to_string(g.kernel) + ", stride " +
                           std::to_string(g.stride) + ", padding " + std::to_string(g.padding));
}

}  // namespace

const ConvPlan& CudaOps::Impl::conv_plan(const ops::Conv2dGeometry& g) {
  const ConvKey key = key_of(g, precision);
  auto found = conv_plans.find(key);
  if (found != conv_plans.end()) return found->second;
  ConvDescriptors d(g, tf32, precision);
  ConvPlan plan;
  int returned = 0;
  cudnnConvolutionFwdAlgoPerf_t fwd[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
  WT_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(
      cudnn, d.x, d.w, d.conv, d.y, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &returned, fwd));
  plan.forward = deterministic_choice(fwd, returned, "forward", g);
  cudnnConvolutionBwdDataAlgoPerf_t data[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
  WT_CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7(
      cudnn, d.w, d.y, d.conv, d.x, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &returned, data));
  plan.backward_data = deterministic_choice(data, returned, "backward-data", g);
  cudnnConvolutionBwdFilterAlgoPerf_t filter[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
  WT_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(
      cudnn, d.x, d.y, d.conv, d.w, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &returned, filter));
  plan.backward_filter = deterministic_choice(filter, returned, "backward-filter", g);
  WT_CUDNN_CHECK(cudnnGetConvolutionForwardWorkspaceSize(cudnn, d.x, d.w, d.conv, d.y, plan.forward,
                                                         &plan.forward_bytes));
  size_t data_bytes = 0, filter_bytes = 0;
  WT_CUDNN_CHECK(cudnnGetConvolutionBackwardDataWorkspaceSize(cudnn, d.w, d.y, d.conv, d.x,
                                                              plan.backward_data, &data_bytes));
  WT_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterWorkspaceSize(
      cudnn, d.x, d.y, d.conv, d.w, plan.backward_filter, &filter_bytes));
  plan.backward_bytes = std::max(data_bytes, filter_bytes);
  return conv_plans.emplace(key, plan).first->second;
}

// The workspace cuDNN's algorithms take, then (bf16) the copies, 256-byte aligned.
int64_t CudaOps::conv2d_scratch_floats(const ops::Conv2dGeometry& g, bool) const {
  const ConvPlan& plan = impl_->conv_plan(g);
  size_t bytes = std::max(plan.forward_bytes, plan.backward_bytes);
  if (impl_->precision == Precision::Bf16)
    bytes = Bf16Copies::aligned(bytes) + Bf16Copies(g).bytes();
  return int64_t((bytes + sizeof(float) - 1) / sizeof(float));
}

void CudaOps::conv2d_forward(const ops::Conv2dGeometry& g, const float* x, const float* w,
                             const float* bias, float* y, const Scratch& scratch) const {
  if (impl_->precision == Precision::Bf16) return conv2d_forward_bf16(g, x, w, bias, y, scratch);
  const ConvPlan& plan = impl_->conv_plan(g);
  ConvDescriptors d(g, impl_->tf32, Precision::Fp32);
  ConvScratch ws(scratch, plan.forward_bytes, impl_->stream, impl_->workspace);
  const float one = 1.0f, zero = 0.0f;
  WT_CUDNN_CHECK(cudnnConvolutionForward(impl_->cudnn, &one, d.x, x, d.w, w, d.conv, plan.forward,
                                         ws.data, plan.forward_bytes, &zero, d.y, y));
  if (bias) WT_CUDNN_CHECK(cudnnAddTensor(impl_->cudnn, &one, d.bias, bias, &one, d.y, y));
}

// Parameter gradients accumulate (beta = 1): the executor zeroes them once per step; dx is
// overwritten.
void CudaOps::conv2d_backward(const ops::Conv2dGeometry& g, const float* x, const float* w,
                              const float* dy, float* dx, float* dw, float* dbias,
                              const Scratch& scratch) const {
  if (impl_->precision == Precision::Bf16)
    return conv2d_backward_bf16(g, x, w, dy, dx, dw, dbias, scratch);
  const ConvPlan& plan = impl_->conv_plan(g);
  ConvDescriptors d(g, impl_->tf32, Precision::Fp32);
  ConvScratch ws(scratch, plan.backward_bytes, impl_->stream, impl_->workspace);
  const float one = 1.0f, zero = 0.0f;
  if (dw)
    WT_CUDNN_CHECK(cudnnConvolutionBackwardFilter(impl_->cudnn, &one, d.x, x, d.y, dy, d.conv,
                                                  plan.backward_filter, ws.data,
                                                  plan.backward_bytes, &one, d.w, dw));
  if (dbias && dw)
    WT_CUDNN_CHECK(cudnnConvolutionBackwardBias(impl_->cudnn, &one, d.y, dy, &one, d.bias, dbias));
  if (dx)
    WT_CUDNN_CHECK(cudnnConvolutionBackwardData(impl_->cudnn, &one, d.w, w, d.y, dy, d.conv,
                                                plan.backward_data, ws.data, plan.backward_bytes,
                                                &zero, d.x, dx));
}

void CudaOps::conv2d_forward_bf16(const ops::Conv2dGeometry& g, const float* x, const float* w,
                                  const float* bias, float* y, const Scratch& scratch) const {
  const ConvPlan& plan = impl_->conv_plan(g);
  ConvDescriptors d(g, impl_->tf32, Precision::Bf16);
  const Bf16Copies copies(g);
  const size_t ws_bytes = Bf16Copies::aligned(plan.forward_bytes);
  ConvScratch ws(scratch, ws_bytes + copies.bytes(), impl_->stream, impl_->workspace);
  void* base = static_cast<char*>(ws.data) + ws_bytes;
  cudaStream_t s = impl_->stream;
  cuda_for(s, copies.x, kern::ToBf16{x, copies.at(base, kX16)});
  cuda_for(s, copies.w, kern::ToBf16{w, copies.at(base, kW16)});
  const float one = 1.0f, zero = 0.0f;
  WT_CUDNN_CHECK(cudnnConvolutionForward(impl_->cudnn, &one, d.x, copies.at(base, kX16), d.w,
                                         copies.at(base, kW16), d.conv, plan.forward, ws.data,
                                         plan.forward_bytes, &zero, d.y, copies.at(base, kY16)));
  cuda_for(s, copies.y, kern::FromBf16{copies.at(base, kY16), y, false});
  if (bias) WT_CUDNN_CHECK(cudnnAddTensor(impl_->cudnn, &one, d.bias, bias, &one, d.y32, y));
}

// dw += the bf16 filter gradient, widened; dbias from the FP32 dy; dx overwritten.
void CudaOps::conv2d_backward_bf16(const ops::Conv2dGeometry& g, const float* x, const float* w,
                                   const float* dy, float* dx, float* dw, float* dbias,
                                   const Scratch& scratch) const {
  const ConvPlan& plan = impl_->conv_plan(g);
  ConvDescriptors d(g, impl_->tf32, Precision::Bf16);
  const Bf16Copies copies(g);
  const size_t ws_bytes = Bf16Copies::aligned(plan.backward_bytes);
  ConvScratch ws(scratch, ws_bytes + copies.bytes(), impl_->stream, impl_->workspace);
  void* base = static_cast<char*>(ws.data) + ws_bytes;
  cudaStream_t s = impl_->stream;
  if (dw) cuda_for(s, copies.x, kern::ToBf16{x, copies.at(base, kX16)});
  cuda_for(s, copies.w, kern::ToBf16{w, copies.at(base, kW16)});
  cuda_for(s, copies.y, kern::ToBf16{dy, copies.at(base, kY16)});
  const float one = 1.0f, zero = 0.0f;
  if (dw) {
    WT_CUDNN_CHECK(cudnnConvolutionBackwardFilter(
        impl_->cudnn, &one, d.x, copies.at(base, kX16), d.y, copies.at(base, kY16), d.conv,
        plan.backward_filter, ws.data, plan.backward_bytes, &zero, d.w, copies.at(base, kDw16)));
    cuda_for(s, copies.w, kern::FromBf16{copies.at(base, kDw16), dw, true});
  }
  if (dbias && dw)
    WT_CUDNN_CHECK(
        cudnnConvolutionBackwardBias(impl_->cudnn, &one, d.y32, dy, &one, d.bias, dbias));
  if (!dx) return;
  WT_CUDNN_CHECK(cudnnConvolutionBackwardData(
      impl_->cudnn, &one, d.w, copies.at(base, kW16), d.y, copies.at(base, kY16), d.conv,
      plan.backward_data, ws.data, plan.backward_bytes, &zero, d.x, copies.at(base, kDx16)));
  cuda_for(s, copies.x, kern::FromBf16{copies.at(base, kDx16), dx, false});
}

}  // namespace wt::cuda

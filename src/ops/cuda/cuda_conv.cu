// Convolutions of CudaOps: cuDNN, with each shape's algorithms chosen once (cuDNN's heuristics)
// and cached, and the workspace taken from the caller's scratch (the device's allocator, or
// memory the issuing host code reserved), so a replayed step allocates nothing.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "ops/cuda/cuda_ops_impl.cuh"

namespace wt::cuda {
namespace {

int to_int(int64_t v) { return static_cast<int>(v); }

// The four descriptors of one convolution, created for the call and destroyed with it (creating
// them costs microseconds, far below a convolution; caching them would only add state).
struct ConvDescriptors {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr, bias = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;

  ConvDescriptors(const ops::Conv2dGeometry& g, bool tf32) {
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
    // Plain FP32 unless TF32 is allowed (device.tf32), so results match the host's to rounding.
    WT_CUDNN_CHECK(cudnnSetConvolutionMathType(conv, tf32 ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH));
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

ConvKey key_of(const ops::Conv2dGeometry& g) {
  return {g.batch, g.in_channels, g.in_h, g.in_w, g.out_channels, g.kernel, g.stride, g.padding};
}

// The scratch a call uses: reserved memory, else a tensor from the allocator held for the call
// (freed on the stream, so the queued convolution keeps it), else the ops' own workspace.
struct ConvScratch {
  Tensor held;
  void* data = nullptr;
  ConvScratch(const Scratch& scratch, size_t bytes, GrowingBuffer& fallback, cudaStream_t stream) {
    if (bytes == 0) return;
    if (scratch.reserved) {
      data = scratch.reserved;
    } else if (scratch.memory) {
      held = scratch.floats(int64_t((bytes + sizeof(float) - 1) / sizeof(float)));
      data = held.device_ptr();  // issued, not touched: host code here
    } else {
      data = fallback.at_least(bytes, stream);
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
  const ConvKey key = key_of(g);
  auto found = conv_plans.find(key);
  if (found != conv_plans.end()) return found->second;
  ConvDescriptors d(g, tf32);
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

int64_t CudaOps::conv2d_scratch_floats(const ops::Conv2dGeometry& g, bool) const {
  const ConvPlan& plan = impl_->conv_plan(g);
  const size_t bytes = std::max(plan.forward_bytes, plan.backward_bytes);
  return int64_t((bytes + sizeof(float) - 1) / sizeof(float));
}

void CudaOps::conv2d_forward(const ops::Conv2dGeometry& g, const float* x, const float* w,
                             const float* bias, float* y, const Scratch& scratch) const {
  const ConvPlan& plan = impl_->conv_plan(g);
  ConvDescriptors d(g, impl_->tf32);
  ConvScratch ws(scratch, plan.forward_bytes, impl_->workspace, impl_->stream);
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
  const ConvPlan& plan = impl_->conv_plan(g);
  ConvDescriptors d(g, impl_->tf32);
  ConvScratch ws(scratch, plan.backward_bytes, impl_->workspace, impl_->stream);
  const float one = 1.0f, zero = 0.0f;
  WT_CUDNN_CHECK(cudnnConvolutionBackwardFilter(impl_->cudnn, &one, d.x, x, d.y, dy, d.conv,
                                                plan.backward_filter, ws.data, plan.backward_bytes,
                                                &one, d.w, dw));
  if (dbias)
    WT_CUDNN_CHECK(cudnnConvolutionBackwardBias(impl_->cudnn, &one, d.y, dy, &one, d.bias, dbias));
  if (dx)
    WT_CUDNN_CHECK(cudnnConvolutionBackwardData(impl_->cudnn, &one, d.w, w, d.y, dy, d.conv,
                                                plan.backward_data, ws.data, plan.backward_bytes,
                                                &zero, d.x, dx));
}

}  // namespace wt::cuda

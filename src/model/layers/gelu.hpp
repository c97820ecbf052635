#pragma once
// gelu: GELU in the erf form y = x * Phi(x), as torch.nn.GELU(), any shape. No keys.
#include "model/layers/elementwise_layer.hpp"

namespace wt {

struct GeluFunction {
  static constexpr const char* kType = "gelu";
  // About 10 flops per element forward (erf counted as a handful), x3 for forward + backward.
  static constexpr double kFlopsPerElement = 30;
  static void forward(const OpsBackend& ops, const float* x, float* y, int64_t n);
  static void backward(const OpsBackend& ops, const float* x, const float* y, const float* dy,
                       float* dx, int64_t n);
};
using Gelu = ElementwiseLayer<GeluFunction>;

}  // namespace wt

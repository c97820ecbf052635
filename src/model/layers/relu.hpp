#pragma once
// relu: y = max(x, 0) elementwise, any shape. No keys.
#include "model/layers/elementwise_layer.hpp"

namespace wt {

struct ReluFunction {
  static constexpr const char* kType = "relu";
  // One compare per element forward; backward is the same again twice over (x3 convention).
  static constexpr double kFlopsPerElement = 3;
  static void forward(const OpsBackend& ops, const float* x, float* y, int64_t n);
  static void backward(const OpsBackend& ops, const float* x, const float* y, const float* dy,
                       float* dx, int64_t n);
};
using Relu = ElementwiseLayer<ReluFunction>;

}  // namespace wt

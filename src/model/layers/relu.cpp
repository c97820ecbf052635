#include "model/layers/relu.hpp"

#include "model/layer_registry.hpp"

namespace wt {

void ReluFunction::forward(const OpsBackend& ops, const float* x, float* y, int64_t n) {
  ops.relu_forward(x, y, n);
}

// The output says where the input was positive: the input itself is not needed.
void ReluFunction::backward(const OpsBackend& ops, const float*, const float* y, const float* dy,
                            float* dx, int64_t n) {
  ops.relu_backward(y, dy, dx, n);
}

WT_REGISTER_LAYER("relu", Relu);

}  // namespace wt

#include "model/layers/gelu.hpp"

#include "model/layer_registry.hpp"

namespace wt {

void GeluFunction::forward(const OpsBackend& ops, const float* x, float* y, int64_t n) {
  ops.gelu_forward(x, y, n);
}

void GeluFunction::backward(const OpsBackend& ops, const float* x, const float*, const float* dy,
                            float* dx, int64_t n) {
  ops.gelu_backward(x, dy, dx, n);
}

WT_REGISTER_LAYER("gelu", Gelu);

}  // namespace wt

#include "model/layers/maxpool2d.hpp"

#include "model/layer_registry.hpp"

namespace wt {

void MaxPool2d::pool_forward(const OpsBackend& ops, const ops::Pool2dGeometry& g, const float* x,
                             float* y) {
  ops.maxpool2d_forward(g, x, y);
}

void MaxPool2d::pool_backward(const OpsBackend& ops, const ops::Pool2dGeometry& g, const float* x,
                              const float* dy, float* dx) {
  if (relu_mask_)
    ops.maxpool2d_relu_backward(g, x, dy, dx);
  else
    ops.maxpool2d_backward(g, x, dy, dx);
}

WT_REGISTER_LAYER("maxpool2d", MaxPool2d);

}  // namespace wt

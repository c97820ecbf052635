#include "model/layers/avgpool2d.hpp"

#include "model/layer_registry.hpp"

namespace wt {

void AvgPool2d::pool_forward(const OpsBackend& ops, const ops::Pool2dGeometry& g, const float* x,
                             float* y) {
  ops.avgpool2d_forward(g, x, y);
}

void AvgPool2d::pool_backward(const OpsBackend& ops, const ops::Pool2dGeometry& g, const float* x,
                              const float* dy, float* dx) {
  (void)x;
  ops.avgpool2d_backward(g, dy, dx);
}

WT_REGISTER_LAYER("avgpool2d", AvgPool2d);

}  // namespace wt

#pragma once
// Average pooling; padded cells count in the divisor (PyTorch count_include_pad=True).
#include "model/layers/pool2d_base.hpp"

namespace wt {

class AvgPool2d : public Pool2dBase {
 public:
  explicit AvgPool2d(const LayerArgs& args) : Pool2dBase(args) {}
  const char* type() const override { return "avgpool2d"; }

 protected:
  void pool_forward(const OpsBackend& ops, const ops::Pool2dGeometry& g, const float* x,
                    float* y) override;
  void pool_backward(const OpsBackend& ops, const ops::Pool2dGeometry& g, const float* x,
                     const float* dy, float* dx) override;
};

}  // namespace wt

#pragma once
// Max pooling; backward sends each gradient to the first maximum of its window.
#include "model/layers/pool2d_base.hpp"

namespace wt {

class MaxPool2d : public Pool2dBase {
 public:
  explicit MaxPool2d(const LayerArgs& args) : Pool2dBase(args) {}
  const char* type() const override { return "maxpool2d"; }
  // Its input a fused ReLU's output: backward applies the ReLU's mask in the same pass.
  bool fuse_relu_input_mask() override {
    relu_mask_ = true;
    return true;
  }

 protected:
  void pool_forward(const OpsBackend& ops, const ops::Pool2dGeometry& g, const float* x,
                    float* y) override;
  void pool_backward(const OpsBackend& ops, const ops::Pool2dGeometry& g, const float* x,
                     const float* dy, float* dx) override;

 private:
  bool relu_mask_ = false;
};

}  // namespace wt

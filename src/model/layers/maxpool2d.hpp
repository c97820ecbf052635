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
  // Blocked in, blocked or NCHW out (ops/host/pool2d_blocked.hpp); NCHW in stays NCHW out.
  bool can_block_input() const override { return true; }
  bool can_block_output(bool input_blocked) const override { return input_blocked; }
  void block_channels(bool input, bool output) override {
    shape_.x_blocked = input;
    shape_.y_blocked = output;
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

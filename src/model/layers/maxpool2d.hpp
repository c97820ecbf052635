#pragma once
// Max pooling; backward sends each gradient to the first maximum of its window.
#include "model/layers/pool2d_base.hpp"

namespace wt {

class MaxPool2d : public Pool2dBase {
 public:
  explicit MaxPool2d(const LayerArgs& args) : Pool2dBase(args) {}
  const char* type() const override { return "maxpool2d"; }
  void forward(const std::vector<const Tensor*>& in, Tensor& out, Saved& saved,
               const LayerContext& ctx) override;
  void backward(const std::vector<const Tensor*>& in, const Tensor& out, const Tensor& dout,
                const std::vector<Tensor*>& din, Saved& saved, const LayerContext& ctx) override;
};

}  // namespace wt

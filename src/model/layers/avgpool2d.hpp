#pragma once
// Average pooling; padded cells count in the divisor (PyTorch count_include_pad=True).
#include "model/layers/pool2d_base.hpp"

namespace wt {

class AvgPool2d : public Pool2dBase {
 public:
  explicit AvgPool2d(const LayerArgs& args) : Pool2dBase(args) {}
  const char* type() const override { return "avgpool2d"; }
  void forward(const std::vector<const Tensor*>& in, Tensor& out, Saved& saved,
               const LayerContext& ctx) override;
  void backward(const std::vector<const Tensor*>& in, const Tensor& out, const Tensor& dout,
                const std::vector<Tensor*>& din, Saved& saved, const LayerContext& ctx) override;
};

}  // namespace wt

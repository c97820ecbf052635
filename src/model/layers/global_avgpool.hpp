#pragma once
// Mean over each channel's spatial positions: [C, H, W] -> [C] (any rank >= 2: [C, ...] -> [C]).
#include "model/layer.hpp"
#include "model/layer_args.hpp"

namespace wt {

class GlobalAvgPool : public Layer {
 public:
  explicit GlobalAvgPool(const LayerArgs& args) { (void)args; }
  const char* type() const override { return "global_avgpool"; }
  Shape infer(const std::vector<Shape>& inputs) override;
  void forward(const std::vector<const Tensor*>& in, Tensor& out, Saved& saved,
               const LayerContext& ctx) override;
  void backward(const std::vector<const Tensor*>& in, const Tensor& out, const Tensor& dout,
                const std::vector<Tensor*>& din, Saved& saved, const LayerContext& ctx) override;
  double flops_per_sample() const override { return 2.0 * double(channels_ * pixels_); }

 private:
  int64_t channels_ = 0, pixels_ = 0;
};

}  // namespace wt

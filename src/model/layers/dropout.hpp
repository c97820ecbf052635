#pragma once
// dropout: key p (float in [0, 1), default 0.5). Train: inverted dropout, y = x * mask with mask
// entries 1/(1-p) (kept) or 0 drawn from ctx.rng and kept in Saved for backward. Eval: identity.
#include "model/layer.hpp"
#include "model/layer_args.hpp"

namespace wt {

class Dropout : public Layer {
 public:
  explicit Dropout(const LayerArgs& args);
  const char* type() const override { return "dropout"; }
  Shape infer(const std::vector<Shape>& inputs) override;
  void forward(const std::vector<const Tensor*>& in, Tensor& out, Saved& saved,
               const LayerContext& ctx) override;
  void backward(const std::vector<const Tensor*>& in, const Tensor& out, const Tensor& dout,
                const std::vector<Tensor*>& din, Saved& saved, const LayerContext& ctx) override;
  double flops_per_sample() const override;
  float p() const { return p_; }

 private:
  float p_;
  int64_t sample_numel_ = 0;
};

}  // namespace wt

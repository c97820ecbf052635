#pragma once
// layernorm: normalises over the last dimension, as torch.nn.LayerNorm(last_dim): any per-sample
// shape [..., D]. Key eps (1e-5). Params weight [D] (init 1), bias [D] (init 0).
// Forward saves each row's mean and 1/std for backward.
#include "model/layer.hpp"
#include "model/layer_args.hpp"

namespace wt {

class LayerNorm : public Layer {
 public:
  explicit LayerNorm(const LayerArgs& args);
  const char* type() const override { return "layernorm"; }
  Shape infer(const std::vector<Shape>& inputs) override;
  std::vector<ParamSpec> param_specs() const override;
  void init(Rng& rng) override;
  void forward(const std::vector<const Tensor*>& in, Tensor& out, Saved& saved,
               const LayerContext& ctx) override;
  void backward(const std::vector<const Tensor*>& in, const Tensor& out, const Tensor& dout,
                const std::vector<Tensor*>& din, Saved& saved, const LayerContext& ctx) override;
  double flops_per_sample() const override;

 private:
  double eps_;
  int64_t dim_ = 0;
  int64_t sample_numel_ = 0;
};

}  // namespace wt

#pragma once
// gelu: GELU in the erf form y = x * Phi(x), as torch.nn.GELU(), any shape. No keys.
#include "model/layer.hpp"
#include "model/layer_args.hpp"

namespace wt {

class Gelu : public Layer {
 public:
  explicit Gelu(const LayerArgs& args);
  const char* type() const override { return "gelu"; }
  Shape infer(const std::vector<Shape>& inputs) override;
  void forward(const std::vector<const Tensor*>& in, Tensor& out, Saved& saved,
               const LayerContext& ctx) override;
  void backward(const std::vector<const Tensor*>& in, const Tensor& out, const Tensor& dout,
                const std::vector<Tensor*>& din, Saved& saved, const LayerContext& ctx) override;
  double flops_per_sample() const override;

 private:
  int64_t sample_numel_ = 0;
};

}  // namespace wt

#pragma once
// relu: y = max(x, 0) elementwise, any shape. No keys.
#include "model/layer.hpp"
#include "model/layer_args.hpp"

namespace wt {

class Relu : public Layer {
 public:
  explicit Relu(const LayerArgs& args);
  const char* type() const override { return "relu"; }
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

#pragma once
// add: elementwise sum of two or more inputs of the same shape (residual connections). The model
// file names them with inputs = ["a", "b", ...]. No keys.
#include "model/layer.hpp"
#include "model/layer_args.hpp"

namespace wt {

class Add : public Layer {
 public:
  explicit Add(const LayerArgs& args);
  const char* type() const override { return "add"; }
  Shape infer(const std::vector<Shape>& inputs) override;
  void forward(const std::vector<const Tensor*>& in, Tensor& out, Saved& saved,
               const LayerContext& ctx) override;
  void backward(const std::vector<const Tensor*>& in, const Tensor& out, const Tensor& dout,
                const std::vector<Tensor*>& din, Saved& saved, const LayerContext& ctx) override;
  double flops_per_sample() const override;

 private:
  int64_t sample_numel_ = 0;
  int64_t input_count_ = 0;
};

}  // namespace wt

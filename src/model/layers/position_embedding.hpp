#pragma once
// position_embedding: adds a learned vector per position, [T, dim] -> [T, dim], as GPT-2's wpe.
// No keys: T and dim come from the input. Param weight [T, dim], init N(0, 0.02).
#include "model/layer.hpp"
#include "model/layer_args.hpp"

namespace wt {

class PositionEmbedding : public Layer {
 public:
  explicit PositionEmbedding(const LayerArgs& args);
  const char* type() const override { return "position_embedding"; }
  Shape infer(const std::vector<Shape>& inputs) override;
  std::vector<ParamSpec> param_specs() const override;
  void init(Rng& rng) override;
  void forward(const std::vector<const Tensor*>& in, Tensor& out, Saved& saved,
               const LayerContext& ctx) override;
  void backward(const std::vector<const Tensor*>& in, const Tensor& out, const Tensor& dout,
                const std::vector<Tensor*>& din, Saved& saved, const LayerContext& ctx) override;
  double flops_per_sample() const override;

 private:
  int64_t tokens_ = 0, dim_ = 0;
};

}  // namespace wt

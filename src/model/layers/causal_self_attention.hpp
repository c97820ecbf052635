#pragma once
// causal_self_attention: multi-head self-attention with a causal mask, [T, d] -> [T, d], as
// torch.nn.MultiheadAttention(d, heads, batch_first=True) with attn_mask = upper triangle, i.e.
// position t attends to positions <= t. Keys: heads (required; must divide d).
// Params: qkv_weight [3d, d] and qkv_bias [3d] (query, key, value projections stacked), out_weight
// [d, d] and out_bias [d]. Weights init U(+-1/sqrt(d)), biases 0.
// Forward saves the projected q|k|v rows, the attention probabilities [N, heads, T, T] and the
// per-head context before the output projection.
#include "model/layer.hpp"
#include "model/layer_args.hpp"

namespace wt {

class CausalSelfAttention : public Layer {
 public:
  explicit CausalSelfAttention(const LayerArgs& args);
  const char* type() const override { return "causal_self_attention"; }
  Shape infer(const std::vector<Shape>& inputs) override;
  std::vector<ParamSpec> param_specs() const override;
  void init(Rng& rng) override;
  void forward(const std::vector<const Tensor*>& in, Tensor& out, Saved& saved,
               const LayerContext& ctx) override;
  void backward(const std::vector<const Tensor*>& in, const Tensor& out, const Tensor& dout,
                const std::vector<Tensor*>& din, Saved& saved, const LayerContext& ctx) override;
  double flops_per_sample() const override;

 private:
  int64_t heads_;
  int64_t tokens_ = 0, dim_ = 0, head_dim_ = 0;
};

}  // namespace wt

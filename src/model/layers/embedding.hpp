#pragma once
// embedding: token ids [T] -> vectors [T, dim], as torch.nn.Embedding. The ids arrive as floats
// holding integers (every input tensor is float; a token dataset's uint8 ids convert exactly).
// Keys: vocab (required), dim (required). Param weight [vocab, dim], init N(0, 0.02) as in GPT-2.
// Ids are not differentiable: an input gradient, if asked for, is zero.
#include "model/layer.hpp"
#include "model/layer_args.hpp"

namespace wt {

class Embedding : public Layer {
 public:
  explicit Embedding(const LayerArgs& args);
  const char* type() const override { return "embedding"; }
  Shape infer(const std::vector<Shape>& inputs) override;
  std::vector<ParamSpec> param_specs() const override;
  void init(Rng& rng) override;
  void forward(const std::vector<const Tensor*>& in, Tensor& out, Saved& saved,
               const LayerContext& ctx) override;
  void backward(const std::vector<const Tensor*>& in, const Tensor& out, const Tensor& dout,
                const std::vector<Tensor*>& din, Saved& saved, const LayerContext& ctx) override;
  double flops_per_sample() const override;
  int64_t vocab() const { return vocab_; }

 private:
  int64_t token_id(float value, int64_t position) const;  // checked: an integer in [0, vocab)
  // The ids of a batch as table rows, checked; kept in ids_ so a step allocates nothing.
  const int64_t* token_ids(const Tensor& ids);
  std::vector<int64_t> ids_;

  int64_t vocab_, dim_;
  int64_t tokens_ = 0;
};

}  // namespace wt

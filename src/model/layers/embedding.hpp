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
  // The ids of a batch as table rows (int64, checked by the kernel), in device memory.
  Tensor token_ids(const Tensor& ids, const LayerContext& ctx) const;
  static int64_t* row_ids(const Tensor& rows) {
    return reinterpret_cast<int64_t*>(rows.device_ptr());
  }

  int64_t vocab_, dim_;
  int64_t tokens_ = 0;
};

}  // namespace wt

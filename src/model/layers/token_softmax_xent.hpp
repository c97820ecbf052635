#pragma once
// token_softmax_xent: the loss layer of sequence models. Input logits [T, classes] per sample,
// labels [T] per sample (the batch's labels are N*T int32, sample-major); one softmax
// cross-entropy per token. A sample's loss is the MEAN over its T tokens, so the executor's
// per-sample accounting (loss_sum / samples) gives the mean per-token loss, as PyTorch's
// cross_entropy over [N*T] rows does. Output shape [1]: ctx.loss_scale * sum of sample losses.
// Saved.scalar gets the unscaled sum of sample losses, Saved.scalar2 the correct tokens / T.
#include "model/layer.hpp"
#include "model/layer_args.hpp"

namespace wt {

class TokenSoftmaxXent : public Layer {
 public:
  explicit TokenSoftmaxXent(const LayerArgs& args);
  const char* type() const override { return "token_softmax_xent"; }
  Shape infer(const std::vector<Shape>& inputs) override;
  void forward(const std::vector<const Tensor*>& in, Tensor& out, Saved& saved,
               const LayerContext& ctx) override;
  void backward(const std::vector<const Tensor*>& in, const Tensor& out, const Tensor& dout,
                const std::vector<Tensor*>& din, Saved& saved, const LayerContext& ctx) override;
  double flops_per_sample() const override;
  bool is_loss() const override { return true; }
  int64_t labels_per_sample() const override { return tokens_; }

 private:
  int64_t tokens_ = 0, classes_ = 0;
};

}  // namespace wt

#pragma once
// The loss layers, one implementation registered under two names:
// - softmax_xent: logits [classes] per sample, one label per sample;
// - token_softmax_xent: logits [T, classes] per sample (sequence models), labels [T] per sample
//   (the batch's labels are N*T int32, sample-major), one softmax cross-entropy per token. A
//   sample's loss is the MEAN over its T tokens, so the executor's per-sample accounting
//   (loss_sum / samples) gives the mean per-token loss, as PyTorch's cross_entropy over [N*T]
//   rows does.
// softmax_xent is the case T = 1. Output is ONE value, shape [1] (not [N, 1]): ctx.loss_scale *
// the sum of sample losses. ctx.totals, when set (device memory), gets += the unscaled sum of
// sample losses and the number of correct argmax predictions (correct tokens / T): the values
// stay on the device until the executor's one copy back per step.
#include "model/layer.hpp"
#include "model/layer_args.hpp"

namespace wt {

class SoftmaxXent : public Layer {
 public:
  SoftmaxXent(const LayerArgs& args, bool per_token);
  const char* type() const override { return per_token_ ? "token_softmax_xent" : "softmax_xent"; }
  Shape infer(const std::vector<Shape>& inputs) override;
  void forward(const std::vector<const Tensor*>& in, Tensor& out, Saved& saved,
               const LayerContext& ctx) override;
  void backward(const std::vector<const Tensor*>& in, const Tensor& out, const Tensor& dout,
                const std::vector<Tensor*>& din, Saved& saved, const LayerContext& ctx) override;
  double flops_per_sample() const override;
  bool is_loss() const override { return true; }
  int64_t labels_per_sample() const override { return tokens_; }

 private:
  bool per_token_;
  int64_t tokens_ = 1, classes_ = 0;
};

}  // namespace wt

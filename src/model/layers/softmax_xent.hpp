#pragma once
// softmax_xent: the loss layer. Input logits [classes] per sample; output is ONE value, shape [1]
// (not [N, 1]): ctx.loss_scale * sum over the batch of -log softmax(x)[label]. Saved.scalar gets
// the unscaled loss sum, Saved.scalar2 the number of correct argmax predictions.
#include "model/layer.hpp"
#include "model/layer_args.hpp"

namespace wt {

class SoftmaxXent : public Layer {
 public:
  explicit SoftmaxXent(const LayerArgs& args);
  const char* type() const override { return "softmax_xent"; }
  Shape infer(const std::vector<Shape>& inputs) override;
  void forward(const std::vector<const Tensor*>& in, Tensor& out, Saved& saved,
               const LayerContext& ctx) override;
  void backward(const std::vector<const Tensor*>& in, const Tensor& out, const Tensor& dout,
                const std::vector<Tensor*>& din, Saved& saved, const LayerContext& ctx) override;
  double flops_per_sample() const override;
  bool is_loss() const override { return true; }

 private:
  int64_t classes_ = 0;
};

}  // namespace wt

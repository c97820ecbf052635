#include "model/layers/token_softmax_xent.hpp"

#include <stdexcept>

#include "model/layer_registry.hpp"
#include "ops/host/elementwise.hpp"
#include "ops/host/softmax_xent.hpp"

namespace wt {

TokenSoftmaxXent::TokenSoftmaxXent(const LayerArgs& args) { (void)args; }

Shape TokenSoftmaxXent::infer(const std::vector<Shape>& inputs) {
  if (inputs.size() != 1)
    throw std::invalid_argument("token_softmax_xent takes exactly one input, got " +
                                std::to_string(inputs.size()));
  if (inputs[0].size() != 2)
    throw std::invalid_argument("token_softmax_xent needs [T, classes] logits per sample, got " +
                                shape_str(inputs[0]));
  tokens_ = inputs[0][0];
  classes_ = inputs[0][1];
  return {1};
}

void TokenSoftmaxXent::forward(const std::vector<const Tensor*>& in, Tensor& out, Saved& saved,
                               const LayerContext& ctx) {
  const Tensor& logits = *in[0];
  if (!ctx.labels)
    throw std::logic_error("token_softmax_xent '" + name() + "': ctx.labels is not set");
  const int64_t rows = logits.dim(0) * tokens_;
  // As in softmax_xent: softmax - onehot, kept for backward, is the gradient up to a scale.
  Tensor grad = Tensor::empty(logits.shape(), ctx.stream);
  ops::XentStats stats =
      ops::softmax_xent_forward(logits.data(), ctx.labels, rows, classes_, grad.data());
  const double per_token = 1.0 / double(tokens_);
  out = Tensor::empty({1}, ctx.stream);
  out.data()[0] = static_cast<float>(ctx.loss_scale * stats.loss_sum * per_token);
  saved.tensors.clear();
  saved.tensors.push_back(std::move(grad));
  saved.scalar = stats.loss_sum * per_token;
  saved.scalar2 = double(stats.correct) * per_token;
}

void TokenSoftmaxXent::backward(const std::vector<const Tensor*>& in, const Tensor& out,
                                const Tensor& dout, const std::vector<Tensor*>& din, Saved& saved,
                                const LayerContext& ctx) {
  (void)out;
  if (!din[0]) return;
  const Tensor& g = saved.tensors.at(0);
  *din[0] = Tensor::empty(in[0]->shape(), ctx.stream);
  ops::scale(g.data(), dout.data()[0] * ctx.loss_scale / float(tokens_), din[0]->data(), g.numel());
}

// As softmax_xent, per token.
double TokenSoftmaxXent::flops_per_sample() const {
  return 12.0 * double(tokens_) * double(classes_);
}

WT_REGISTER_LAYER("token_softmax_xent", TokenSoftmaxXent);

}  // namespace wt

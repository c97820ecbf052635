#include "model/layers/softmax_xent.hpp"

#include <stdexcept>

#include "model/layer_registry.hpp"
#include "ops/host/elementwise.hpp"
#include "ops/host/softmax_xent.hpp"

namespace wt {

SoftmaxXent::SoftmaxXent(const LayerArgs& args) { (void)args; }

Shape SoftmaxXent::infer(const std::vector<Shape>& inputs) {
  if (inputs.size() != 1)
    throw std::invalid_argument("softmax_xent takes exactly one input, got " +
                                std::to_string(inputs.size()));
  if (inputs[0].size() != 1)
    throw std::invalid_argument("softmax_xent needs [classes] logits, got " + shape_str(inputs[0]) +
                                " (add a flatten or linear layer before it)");
  classes_ = inputs[0][0];
  return {1};
}

void SoftmaxXent::forward(const std::vector<const Tensor*>& in, Tensor& out, Saved& saved,
                          const LayerContext& ctx) {
  const Tensor& logits = *in[0];
  if (!ctx.labels) throw std::logic_error("softmax_xent '" + name() + "': ctx.labels is not set");
  const int64_t n = logits.dim(0);
  // softmax - onehot is the whole backward up to a scale: computing it here leaves backward a
  // single scaled copy and frees it from needing the labels again.
  Tensor grad = Tensor::empty(logits.shape(), ctx.stream);
  ops::XentStats stats =
      ops::softmax_xent_forward(logits.data(), ctx.labels, n, classes_, grad.data());
  out = Tensor::empty({1}, ctx.stream);
  out.data()[0] = static_cast<float>(ctx.loss_scale * stats.loss_sum);
  saved.tensors.clear();
  saved.tensors.push_back(std::move(grad));
  saved.scalar = stats.loss_sum;
  saved.scalar2 = static_cast<double>(stats.correct);
}

void SoftmaxXent::backward(const std::vector<const Tensor*>& in, const Tensor& out,
                           const Tensor& dout, const std::vector<Tensor*>& din, Saved& saved,
                           const LayerContext& ctx) {
  (void)out;
  if (!din[0]) return;
  const Tensor& g = saved.tensors.at(0);
  *din[0] = Tensor::empty(in[0]->shape(), ctx.stream);
  ops::scale(g.data(), dout.data()[0] * ctx.loss_scale, din[0]->data(), g.numel());
}

// Forward: max, exp, sum, divide, about 4 flops per class; x3 for forward + backward.
double SoftmaxXent::flops_per_sample() const { return 12.0 * static_cast<double>(classes_); }

WT_REGISTER_LAYER("softmax_xent", SoftmaxXent);

}  // namespace wt

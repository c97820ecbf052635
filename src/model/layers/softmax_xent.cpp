#include "model/layers/softmax_xent.hpp"

#include <stdexcept>

#include "model/layer_registry.hpp"

namespace wt {

SoftmaxXent::SoftmaxXent(const LayerArgs& args, bool per_token) : per_token_(per_token) {
  (void)args;
}

Shape SoftmaxXent::infer(const std::vector<Shape>& inputs) {
  if (inputs.size() != 1)
    throw std::invalid_argument(std::string(type()) + " takes exactly one input, got " +
                                std::to_string(inputs.size()));
  if (per_token_ && inputs[0].size() != 2)
    throw std::invalid_argument("token_softmax_xent needs [T, classes] logits per sample, got " +
                                shape_str(inputs[0]));
  if (!per_token_ && inputs[0].size() != 1)
    throw std::invalid_argument("softmax_xent needs [classes] logits, got " + shape_str(inputs[0]) +
                                " (add a flatten or linear layer before it)");
  tokens_ = per_token_ ? inputs[0][0] : 1;
  classes_ = inputs[0].back();
  return {1};
}

void SoftmaxXent::forward(const std::vector<const Tensor*>& in, Tensor& out, Saved& saved,
                          const LayerContext& ctx) {
  const Tensor& logits = *in[0];
  if (!ctx.labels)
    throw std::logic_error(std::string(type()) + " '" + name() + "': ctx.labels is not set");
  const int64_t rows = logits.dim(0) * tokens_;
  // softmax - onehot is the whole backward up to a scale: computing it here leaves backward a
  // single scaled copy and frees it from needing the labels again.
  Tensor grad = ctx.empty(logits.shape());
  out = ctx.empty({1});
  ops::XentOutputs results;
  results.per_row = 1.0 / double(tokens_);  // exactly 1 for softmax_xent
  results.loss_scale = ctx.loss_scale;
  results.loss = out.device_ptr();
  results.totals = ctx.totals;
  ctx.ops->softmax_xent_forward(logits.device_ptr(), ctx.labels, rows, classes_, grad.device_ptr(),
                                results);
  saved.tensors.clear();
  saved.tensors.push_back(std::move(grad));
}

void SoftmaxXent::backward(const std::vector<const Tensor*>& in, const Tensor& out,
                           const Tensor& dout, const std::vector<Tensor*>& din, Saved& saved,
                           const LayerContext& ctx) {
  (void)out;
  if (!din[0]) return;
  const Tensor& g = saved.tensors.at(0);
  *din[0] = ctx.empty(in[0]->shape());
  ctx.ops->scale_by(g.device_ptr(), dout.device_ptr(), ctx.loss_scale / float(tokens_),
                    din[0]->device_ptr(), g.numel());
}

// Forward: max, exp, sum, divide, about 4 flops per class; x3 for forward + backward.
double SoftmaxXent::flops_per_sample() const { return 12.0 * double(tokens_) * double(classes_); }

namespace {
struct SampleSoftmaxXent : SoftmaxXent {
  explicit SampleSoftmaxXent(const LayerArgs& args) : SoftmaxXent(args, false) {}
};
struct TokenSoftmaxXent : SoftmaxXent {
  explicit TokenSoftmaxXent(const LayerArgs& args) : SoftmaxXent(args, true) {}
};
}  // namespace

WT_REGISTER_LAYER("softmax_xent", SampleSoftmaxXent);
WT_REGISTER_LAYER("token_softmax_xent", TokenSoftmaxXent);

}  // namespace wt

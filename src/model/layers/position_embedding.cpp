#include "model/layers/position_embedding.hpp"

#include <stdexcept>

#include "model/layer_registry.hpp"
#include "ops/param_init.hpp"

namespace wt {

PositionEmbedding::PositionEmbedding(const LayerArgs& args) { (void)args; }

Shape PositionEmbedding::infer(const std::vector<Shape>& inputs) {
  if (inputs.size() != 1) throw std::invalid_argument("position_embedding takes exactly one input");
  if (inputs[0].size() != 2)
    throw std::invalid_argument("position_embedding expects a sequence [T, dim] per sample, got " +
                                shape_str(inputs[0]));
  tokens_ = inputs[0][0];
  dim_ = inputs[0][1];
  return inputs[0];
}

std::vector<Layer::ParamSpec> PositionEmbedding::param_specs() const {
  return {{"weight", {tokens_, dim_}}};
}

void PositionEmbedding::init(Rng& rng) {
  ops::normal_fill(rng, 0.02f, params_[0]->value.data(), params_[0]->value.numel());
}

void PositionEmbedding::forward(const std::vector<const Tensor*>& in, Tensor& out, Saved& saved,
                                const LayerContext& ctx) {
  (void)saved;
  const Tensor& x = *in[0];
  out = ctx.empty(x.shape());
  const int64_t per_sample = tokens_ * dim_;
  ctx.ops->add_row(x.device_ptr(), params_[0]->value.device_ptr(), x.dim(0), per_sample,
                   out.device_ptr());
}

void PositionEmbedding::backward(const std::vector<const Tensor*>& in, const Tensor& out,
                                 const Tensor& dout, const std::vector<Tensor*>& din, Saved& saved,
                                 const LayerContext& ctx) {
  (void)out;
  (void)saved;
  const int64_t per_sample = tokens_ * dim_;
  ctx.ops->add_column_sums(dout.device_ptr(), dout.dim(0), per_sample,
                           params_[0]->grad.device_ptr());
  if (din[0]) {
    *din[0] = ctx.empty(in[0]->shape());
    ctx.ops->copy(dout.device_ptr(), din[0]->device_ptr(), dout.numel());
  }
}

// One add forward, a copy and an add backward.
double PositionEmbedding::flops_per_sample() const { return 3.0 * double(tokens_ * dim_); }

WT_REGISTER_LAYER("position_embedding", PositionEmbedding);

}  // namespace wt

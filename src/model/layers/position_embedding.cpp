#include "model/layers/position_embedding.hpp"

#include <cstring>
#include <stdexcept>

#include "model/layer_registry.hpp"

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
  float* w = params_[0]->value.data();
  for (int64_t i = 0; i < params_[0]->value.numel(); ++i) w[i] = 0.02f * rng.normal();
}

void PositionEmbedding::forward(const std::vector<const Tensor*>& in, Tensor& out, Saved& saved,
                                const LayerContext& ctx) {
  (void)saved;
  const Tensor& x = *in[0];
  out = Tensor::empty(x.shape(), ctx.stream);
  const int64_t per_sample = tokens_ * dim_;
  const float* p = params_[0]->value.data();
  for (int64_t n = 0; n < x.dim(0); ++n) {
    const float* xs = x.data() + n * per_sample;
    float* ys = out.data() + n * per_sample;
    for (int64_t i = 0; i < per_sample; ++i) ys[i] = xs[i] + p[i];
  }
}

void PositionEmbedding::backward(const std::vector<const Tensor*>& in, const Tensor& out,
                                 const Tensor& dout, const std::vector<Tensor*>& din, Saved& saved,
                                 const LayerContext& ctx) {
  (void)out;
  (void)saved;
  const int64_t per_sample = tokens_ * dim_;
  float* dp = params_[0]->grad.data();
  for (int64_t n = 0; n < dout.dim(0); ++n) {
    const float* dy = dout.data() + n * per_sample;
    for (int64_t i = 0; i < per_sample; ++i) dp[i] += dy[i];
  }
  if (din[0]) {
    *din[0] = Tensor::empty(in[0]->shape(), ctx.stream);
    std::memcpy(din[0]->data(), dout.data(), dout.bytes());
  }
}

// One add forward, a copy and an add backward.
double PositionEmbedding::flops_per_sample() const { return 3.0 * double(tokens_ * dim_); }

WT_REGISTER_LAYER("position_embedding", PositionEmbedding);

}  // namespace wt

#include "model/layers/layernorm.hpp"

#include <cmath>
#include <stdexcept>

#include "model/layer_registry.hpp"

namespace wt {

LayerNorm::LayerNorm(const LayerArgs& args) : eps_(args.get_float("eps", 1e-5, 1e-12, 1.0)) {}

Shape LayerNorm::infer(const std::vector<Shape>& inputs) {
  if (inputs.size() != 1) throw std::invalid_argument("layernorm takes exactly one input");
  if (inputs[0].empty()) throw std::invalid_argument("layernorm needs at least one dimension");
  dim_ = inputs[0].back();
  sample_numel_ = shape_numel(inputs[0]);
  return inputs[0];
}

std::vector<Layer::ParamSpec> LayerNorm::param_specs() const {
  return {{"weight", {dim_}}, {"bias", {dim_}}};
}

void LayerNorm::init(Rng& rng) {
  (void)rng;
  params_[0]->value.fill(1.0f);
  params_[1]->value.fill(0.0f);
}

void LayerNorm::forward(const std::vector<const Tensor*>& in, Tensor& out, Saved& saved,
                        const LayerContext& ctx) {
  const Tensor& x = *in[0];
  const int64_t rows = x.numel() / dim_;
  out = ctx.empty(x.shape());
  Tensor stats = ctx.empty({rows, 2});  // mean, 1/std per row
  ctx.ops->layer_norm_forward(x.device_ptr(), params_[0]->value.device_ptr(),
                              params_[1]->value.device_ptr(), rows, dim_, eps_, out.device_ptr(),
                              stats.device_ptr());
  saved.tensors.clear();
  saved.tensors.push_back(std::move(stats));
}

void LayerNorm::backward(const std::vector<const Tensor*>& in, const Tensor& out,
                         const Tensor& dout, const std::vector<Tensor*>& din, Saved& saved,
                         const LayerContext& ctx) {
  (void)out;
  const Tensor& x = *in[0];
  const Tensor& stats = saved.tensors.at(0);
  const int64_t rows = x.numel() / dim_;
  float* dx = nullptr;
  if (din[0]) {
    *din[0] = ctx.empty(x.shape());
    dx = din[0]->device_ptr();
  }
  ctx.ops->layer_norm_backward(x.device_ptr(), dout.device_ptr(), params_[0]->value.device_ptr(),
                               stats.device_ptr(), rows, dim_, params_[0]->grad.device_ptr(),
                               params_[1]->grad.device_ptr(), dx);
}

// About 8 flops per element forward, 16 backward.
double LayerNorm::flops_per_sample() const { return 24.0 * double(sample_numel_); }

WT_REGISTER_LAYER("layernorm", LayerNorm);

}  // namespace wt

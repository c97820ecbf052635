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
  out = Tensor::empty(x.shape(), ctx.stream);
  Tensor stats = Tensor::empty({rows, 2}, ctx.stream);  // mean, 1/std per row
  const float* w = params_[0]->value.data();
  const float* b = params_[1]->value.data();
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x.data() + r * dim_;
    float* yr = out.data() + r * dim_;
    // Two passes (mean, then centred variance) avoid E[x^2] - E[x]^2 cancellation.
    double sum = 0;
    for (int64_t j = 0; j < dim_; ++j) sum += xr[j];
    const float mean = float(sum / double(dim_));
    double var = 0;
    for (int64_t j = 0; j < dim_; ++j) var += double(xr[j] - mean) * double(xr[j] - mean);
    const float rstd = float(1.0 / std::sqrt(var / double(dim_) + eps_));
    for (int64_t j = 0; j < dim_; ++j) yr[j] = (xr[j] - mean) * rstd * w[j] + b[j];
    stats.data()[2 * r] = mean;
    stats.data()[2 * r + 1] = rstd;
  }
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
  const float* w = params_[0]->value.data();
  float* dw = params_[0]->grad.data();
  float* db = params_[1]->grad.data();
  float* dx = nullptr;
  if (din[0]) {
    *din[0] = Tensor::empty(x.shape(), ctx.stream);
    dx = din[0]->data();
  }
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x.data() + r * dim_;
    const float* dyr = dout.data() + r * dim_;
    const float mean = stats.data()[2 * r], rstd = stats.data()[2 * r + 1];
    // With xhat = (x - mean) * rstd and g = dy * w:
    // dx = rstd * (g - mean(g) - xhat * mean(g * xhat)).
    double sum_g = 0, sum_gx = 0;
    for (int64_t j = 0; j < dim_; ++j) {
      const float xhat = (xr[j] - mean) * rstd;
      const float g = dyr[j] * w[j];
      dw[j] += dyr[j] * xhat;
      db[j] += dyr[j];
      sum_g += g;
      sum_gx += double(g) * xhat;
    }
    if (!dx) continue;
    const float mean_g = float(sum_g / double(dim_)), mean_gx = float(sum_gx / double(dim_));
    float* dxr = dx + r * dim_;
    for (int64_t j = 0; j < dim_; ++j) {
      const float xhat = (xr[j] - mean) * rstd;
      dxr[j] = rstd * (dyr[j] * w[j] - mean_g - xhat * mean_gx);
    }
  }
}

// About 8 flops per element forward, 16 backward.
double LayerNorm::flops_per_sample() const { return 24.0 * double(sample_numel_); }

WT_REGISTER_LAYER("layernorm", LayerNorm);

}  // namespace wt

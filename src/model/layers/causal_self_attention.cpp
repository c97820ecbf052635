#include "model/layers/causal_self_attention.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "model/layer_registry.hpp"
#include "ops/param_init.hpp"

namespace wt {

CausalSelfAttention::CausalSelfAttention(const LayerArgs& args)
    : heads_(args.get_int("heads", 1, 4096)) {}

Shape CausalSelfAttention::infer(const std::vector<Shape>& inputs) {
  if (inputs.size() != 1)
    throw std::invalid_argument("causal_self_attention takes exactly one input");
  if (inputs[0].size() != 2)
    throw std::invalid_argument("causal_self_attention expects a sequence [T, d] per sample, got " +
                                shape_str(inputs[0]));
  tokens_ = inputs[0][0];
  dim_ = inputs[0][1];
  if (dim_ % heads_ != 0)
    throw std::invalid_argument("causal_self_attention: heads = " + std::to_string(heads_) +
                                " does not divide the model dimension " + std::to_string(dim_));
  head_dim_ = dim_ / heads_;
  return inputs[0];
}

std::vector<Layer::ParamSpec> CausalSelfAttention::param_specs() const {
  return {{"qkv_weight", {3 * dim_, dim_}},
          {"qkv_bias", {3 * dim_}},
          {"out_weight", {dim_, dim_}},
          {"out_bias", {dim_}}};
}

void CausalSelfAttention::init(Rng& rng) {
  const float bound = 1.0f / std::sqrt(float(dim_));
  for (int p : {0, 2})
    ops::uniform_fill(rng, -bound, bound, params_[p]->value.data(), params_[p]->value.numel());
  params_[1]->value.fill(0.0f);
  params_[3]->value.fill(0.0f);
}

void CausalSelfAttention::forward(const std::vector<const Tensor*>& in, Tensor& out, Saved& saved,
                                  const LayerContext& ctx) {
  const Tensor& x = *in[0];
  const int64_t n = x.dim(0), T = tokens_, d = dim_, dh = head_dim_, ld = 3 * d;
  const float scale = 1.0f / std::sqrt(float(dh));
  Tensor qkv = ctx.empty({n, T, 3 * d});
  Tensor probs = ctx.empty({n, heads_, T, T});
  Tensor context = ctx.empty({n, T, d});
  ctx.ops->linear_forward(x.device_ptr(), params_[0]->value.device_ptr(),
                          params_[1]->value.device_ptr(), n * T, d, 3 * d, qkv.device_ptr());
  // Each head's products over every sample at once (a batched GEMM, sample stride T rows):
  // scores[s, h] = q k^T / sqrt(dh), the masked upper triangle computed and discarded (cheaper
  // than T small GEMMs at these sizes); then one softmax over all n x heads score matrices; then
  // context[s, :, h] = probs v.
  const int64_t rows_stride = T * ld, probs_stride = heads_ * T * T;
  const float* rows = qkv.device_ptr();
  for (int64_t h = 0; h < heads_; ++h)
    ctx.ops->gemm_batched(false, true, T, T, dh, scale, rows + h * dh, ld, rows_stride,
                          rows + d + h * dh, ld, rows_stride, 0.0f, probs.device_ptr() + h * T * T,
                          T, probs_stride, n);
  ctx.ops->causal_softmax(probs.device_ptr(), T, n * heads_);
  for (int64_t h = 0; h < heads_; ++h)
    ctx.ops->gemm_batched(false, false, T, dh, T, 1.0f, probs.device_ptr() + h * T * T, T,
                          probs_stride, rows + 2 * d + h * dh, ld, rows_stride, 0.0f,
                          context.device_ptr() + h * dh, d, T * d, n);
  out = ctx.empty(x.shape());
  ctx.ops->linear_forward(context.device_ptr(), params_[2]->value.device_ptr(),
                          params_[3]->value.device_ptr(), n * T, d, d, out.device_ptr());
  saved.tensors.clear();
  saved.tensors.push_back(std::move(qkv));
  saved.tensors.push_back(std::move(probs));
  saved.tensors.push_back(std::move(context));
}

void CausalSelfAttention::backward(const std::vector<const Tensor*>& in, const Tensor& out,
                                   const Tensor& dout, const std::vector<Tensor*>& din,
                                   Saved& saved, const LayerContext& ctx) {
  (void)out;
  const Tensor& x = *in[0];
  const Tensor& qkv = saved.tensors.at(0);
  const Tensor& probs = saved.tensors.at(1);
  const Tensor& context = saved.tensors.at(2);
  const int64_t n = x.dim(0), T = tokens_, d = dim_, dh = head_dim_, ld = 3 * d;
  const float scale = 1.0f / std::sqrt(float(dh));

  Tensor dcontext = ctx.empty({n, T, d});
  ctx.ops->linear_backward(context.device_ptr(), params_[2]->value.device_ptr(), dout.device_ptr(),
                           n * T, d, d, params_[2]->grad.device_ptr(),
                           params_[3]->grad.device_ptr(), dcontext.device_ptr());

  Tensor dqkv = ctx.empty({n, T, 3 * d});
  // The forward's batched form backwards: dprobs = dcontext v^T and dv = probs^T dcontext per
  // head over all samples, one softmax backward over every matrix (dprobs -> dscores), then
  // dq = dscores k / sqrt(dh) and dk = dscores^T q / sqrt(dh).
  Tensor dp = ctx.empty({n, heads_, T, T});
  const int64_t rows_stride = T * ld, probs_stride = heads_ * T * T;
  const float* rows = qkv.device_ptr();
  float* drows = dqkv.device_ptr();
  const float* dc = dcontext.device_ptr();
  for (int64_t h = 0; h < heads_; ++h) {
    const float* p = probs.device_ptr() + h * T * T;
    float* dph = dp.device_ptr() + h * T * T;
    ctx.ops->gemm_batched(false, true, T, T, dh, 1.0f, dc + h * dh, d, T * d, rows + 2 * d + h * dh,
                          ld, rows_stride, 0.0f, dph, T, probs_stride, n);
    ctx.ops->gemm_batched(true, false, T, dh, T, 1.0f, p, T, probs_stride, dc + h * dh, d, T * d,
                          0.0f, drows + 2 * d + h * dh, ld, rows_stride, n);
  }
  ctx.ops->causal_softmax_backward(probs.device_ptr(), dp.device_ptr(), T, n * heads_);
  for (int64_t h = 0; h < heads_; ++h) {
    const float* dph = dp.device_ptr() + h * T * T;
    ctx.ops->gemm_batched(false, false, T, dh, T, scale, dph, T, probs_stride, rows + d + h * dh,
                          ld, rows_stride, 0.0f, drows + h * dh, ld, rows_stride, n);
    ctx.ops->gemm_batched(true, false, T, dh, T, scale, dph, T, probs_stride, rows + h * dh, ld,
                          rows_stride, 0.0f, drows + d + h * dh, ld, rows_stride, n);
  }
  float* dx = nullptr;
  if (din[0]) {
    *din[0] = ctx.empty(x.shape());
    dx = din[0]->device_ptr();
  }
  ctx.ops->linear_backward(x.device_ptr(), params_[0]->value.device_ptr(), dqkv.device_ptr(), n * T,
                           d, 3 * d, params_[0]->grad.device_ptr(), params_[1]->grad.device_ptr(),
                           dx);
}

// Multiply-adds per sample forward: projections 4 T d^2, scores and context 2 T^2 d (full
// squares, as computed). Backward costs twice forward; 2 flops per multiply-add.
double CausalSelfAttention::flops_per_sample() const {
  const double T = double(tokens_), d = double(dim_);
  return 3.0 * 2.0 * (4.0 * T * d * d + 2.0 * T * T * d);
}

WT_REGISTER_LAYER("causal_self_attention", CausalSelfAttention);

}  // namespace wt

#include "model/layers/linear.hpp"

#include <cmath>
#include <stdexcept>

#include "model/layer_registry.hpp"
#include "ops/param_init.hpp"

namespace wt {

Linear::Linear(const LayerArgs& args)
    : out_features_(args.get_int("out_features", 1, int64_t(1) << 30)),
      has_bias_(args.get_bool("bias", true)) {}

Shape Linear::infer(const std::vector<Shape>& inputs) {
  if (inputs.size() != 1) throw std::invalid_argument("linear takes exactly one input");
  // A sequence [T, features] is projected token by token; an image [C, H, W] must be flattened
  // explicitly, so a forgotten flatten is an error rather than a projection over W.
  if (inputs[0].size() != 1 && inputs[0].size() != 2)
    throw std::invalid_argument(
        "linear expects a flat input [features] or a sequence [T, features], "
        "got " +
        shape_str(inputs[0]) + " (add a flatten layer before it)");
  in_features_ = inputs[0].back();
  rows_per_sample_ = inputs[0].size() == 2 ? inputs[0][0] : 1;
  Shape out = inputs[0];
  out.back() = out_features_;
  return out;
}

std::vector<Layer::ParamSpec> Linear::param_specs() const {
  std::vector<ParamSpec> specs{{"weight", {out_features_, in_features_}}};
  if (has_bias_) specs.push_back({"bias", {out_features_}});
  return specs;
}

void Linear::init(Rng& rng) {
  // PyTorch's default: kaiming_uniform(a=sqrt(5)) for the weight and U(+-1/sqrt(fan_in)) for the
  // bias, which are the same bound.
  const float bound = 1.0f / std::sqrt(static_cast<float>(in_features_));
  for (Param* p : params_) ops::uniform_fill(rng, -bound, bound, p->value.data(), p->value.numel());
}

void Linear::forward(const std::vector<const Tensor*>& in, Tensor& out, Saved& saved,
                     const LayerContext& ctx) {
  (void)saved;
  const Tensor& x = *in[0];
  const int64_t n = x.numel() / in_features_;  // rows: samples x tokens
  Shape shape = x.shape();
  shape.back() = out_features_;
  out = ctx.empty(shape);
  const float* b = has_bias_ ? params_[1]->value.device_ptr() : nullptr;
  if (relu_)
    ctx.ops->linear_relu_forward(x.device_ptr(), params_[0]->value.device_ptr(), b, n, in_features_,
                                 out_features_, out.device_ptr());
  else
    ctx.ops->linear_forward(x.device_ptr(), params_[0]->value.device_ptr(), b, n, in_features_,
                            out_features_, out.device_ptr());
}

void Linear::backward(const std::vector<const Tensor*>& in, const Tensor& out, const Tensor& dout,
                      const std::vector<Tensor*>& din, Saved& saved, const LayerContext& ctx) {
  (void)saved;
  const Tensor& x = *in[0];
  const int64_t n = x.numel() / in_features_;
  if (din[0]) *din[0] = ctx.empty(x.shape());
  float* db = has_bias_ ? params_[1]->grad.device_ptr() : nullptr;
  const float* dy = dout.device_ptr();
  Tensor masked;
  if (relu_mask_) {
    // The fused ReLU's backward; the bias gradient is summed in the same pass.
    masked = ctx.empty(dout.shape());
    if (db)
      ctx.ops->relu_backward_column_sums(out.device_ptr(), dy, n, out_features_,
                                         masked.device_ptr(), db);
    else
      ctx.ops->relu_backward(out.device_ptr(), dy, masked.device_ptr(), masked.numel());
    dy = masked.device_ptr();
    db = nullptr;
  }
  ctx.ops->linear_backward(x.device_ptr(), params_[0]->value.device_ptr(), dy, n, in_features_,
                           out_features_, params_[0]->grad.device_ptr(), db,
                           din[0] ? din[0]->device_ptr() : nullptr);
}

void Linear::fuse_relu_epilogue(bool mask_gradient) {
  relu_ = true;
  relu_mask_ = mask_gradient;
}

double Linear::flops_per_sample() const {
  return 3.0 * 2.0 * double(rows_per_sample_) * double(in_features_) * double(out_features_);
}

WT_REGISTER_LAYER("linear", Linear);

}  // namespace wt

#include "model/layers/batchnorm2d.hpp"

#include <stdexcept>

#include "model/layer_registry.hpp"

namespace wt {

namespace {
// Saved layout: tensors {mean [C], invstd [C]}; scalar = 1 when they are batch statistics.
enum SavedSlot { kMean = 0, kInvStd = 1 };
}  // namespace

BatchNorm2d::BatchNorm2d(const LayerArgs& args)
    : momentum_(static_cast<float>(args.get_float("momentum", 0.1, 0.0, 1.0))),
      eps_(static_cast<float>(args.get_float("eps", 1e-5, 0.0, 1.0))) {
  if (eps_ <= 0.0f) args.fail("eps", "must be > 0");
}

Shape BatchNorm2d::infer(const std::vector<Shape>& inputs) {
  if (inputs.size() != 1)
    throw std::invalid_argument("batchnorm2d takes exactly one input, got " +
                                std::to_string(inputs.size()));
  if (inputs[0].size() != 3)
    throw std::invalid_argument("batchnorm2d needs a [C, H, W] input, got " + shape_str(inputs[0]));
  channels_ = inputs[0][0];
  spatial_ = inputs[0][1] * inputs[0][2];
  return inputs[0];
}

std::vector<Layer::ParamSpec> BatchNorm2d::param_specs() const {
  return {{"weight", {channels_}}, {"bias", {channels_}}};
}

std::vector<Layer::ParamSpec> BatchNorm2d::buffer_specs() const {
  return {{"running_mean", {channels_}}, {"running_var", {channels_}}};
}

void BatchNorm2d::init(Rng& rng) {
  (void)rng;  // deterministic init, like PyTorch's reset_parameters()
  params_[0]->value.fill(1.0f);
  params_[1]->value.fill(0.0f);
  buffers_[0]->value.fill(0.0f);
  buffers_[1]->value.fill(1.0f);
}

void BatchNorm2d::forward(const std::vector<const Tensor*>& in, Tensor& out, Saved& saved,
                          const LayerContext& ctx) {
  const Tensor& x = *in[0];
  const ops::BatchNormShape s{x.dim(0), channels_, spatial_};
  out = ctx.empty(x.shape());
  saved.tensors.clear();
  saved.tensors.push_back(ctx.empty({channels_}));
  saved.tensors.push_back(ctx.empty({channels_}));
  float* mean = saved.tensors[kMean].device_ptr();
  float* invstd = saved.tensors[kInvStd].device_ptr();
  const float* gamma = params_[0]->value.device_ptr();
  const float* beta = params_[1]->value.device_ptr();
  float* running_mean = buffers_[0]->value.device_ptr();
  float* running_var = buffers_[1]->value.device_ptr();
  if (ctx.mode == Mode::Train) {
    ctx.ops->batchnorm_forward_train(x.device_ptr(), s, gamma, beta, eps_, momentum_, running_mean,
                                     running_var, mean, invstd, out.device_ptr());
    saved.scalar = 1.0;
  } else {
    ctx.ops->batchnorm_forward_eval(x.device_ptr(), s, gamma, beta, running_mean, running_var, eps_,
                                    mean, invstd, out.device_ptr());
    saved.scalar = 0.0;
  }
}

void BatchNorm2d::backward(const std::vector<const Tensor*>& in, const Tensor& out,
                           const Tensor& dout, const std::vector<Tensor*>& din, Saved& saved,
                           const LayerContext& ctx) {
  (void)out;
  const Tensor& x = *in[0];
  const ops::BatchNormShape s{x.dim(0), channels_, spatial_};
  float* dx = nullptr;
  if (din[0]) {
    *din[0] = ctx.empty(x.shape());
    dx = din[0]->device_ptr();
  }
  ctx.ops->batchnorm_backward(x.device_ptr(), dout.device_ptr(), s, params_[0]->value.device_ptr(),
                              saved.tensors[kMean].device_ptr(),
                              saved.tensors[kInvStd].device_ptr(), saved.scalar != 0.0, dx,
                              params_[0]->grad.device_ptr(), params_[1]->grad.device_ptr());
}

// Forward: statistics (about 3 flops per element) and the affine map (2), x3 for fwd + bwd.
double BatchNorm2d::flops_per_sample() const {
  return 15.0 * static_cast<double>(channels_ * spatial_);
}

WT_REGISTER_LAYER("batchnorm2d", BatchNorm2d);

}  // namespace wt

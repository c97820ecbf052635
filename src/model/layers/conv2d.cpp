#include "model/layers/conv2d.hpp"

#include <cmath>
#include <stdexcept>

#include "model/layer_registry.hpp"
#include "ops/param_init.hpp"

namespace wt {

Conv2d::Conv2d(const LayerArgs& args) : has_bias_(args.get_bool("bias", true)) {
  shape_.out_channels = args.get_int("out_channels", 1, int64_t(1) << 20);
  shape_.kernel = args.get_int("kernel", 1, 1024);
  shape_.stride = args.get_int("stride", 1, 1, 1024);
  shape_.padding = args.get_int("padding", 0, 0, 1024);
}

Shape Conv2d::infer(const std::vector<Shape>& inputs) {
  if (inputs.size() != 1) throw std::invalid_argument("conv2d takes exactly one input");
  if (inputs[0].size() != 3)
    throw std::invalid_argument("conv2d expects an image input [C, H, W], got " +
                                shape_str(inputs[0]));
  shape_.in_channels = inputs[0][0];
  shape_.in_h = inputs[0][1];
  shape_.in_w = inputs[0][2];
  const int64_t padded_h = shape_.in_h + 2 * shape_.padding;
  const int64_t padded_w = shape_.in_w + 2 * shape_.padding;
  if (padded_h < shape_.kernel || padded_w < shape_.kernel)
    throw std::invalid_argument("conv2d kernel " + std::to_string(shape_.kernel) +
                                " is larger than the padded input " + shape_str(inputs[0]));
  return {shape_.out_channels, shape_.out_h(), shape_.out_w()};
}

std::vector<Layer::ParamSpec> Conv2d::param_specs() const {
  std::vector<ParamSpec> specs{
      {"weight", {shape_.out_channels, shape_.in_channels, shape_.kernel, shape_.kernel}}};
  if (has_bias_) specs.push_back({"bias", {shape_.out_channels}});
  return specs;
}

void Conv2d::init(Rng& rng) {
  // PyTorch's default: weight and bias both U(+-1/sqrt(fan_in)), fan_in = C*k*k.
  const float bound = 1.0f / std::sqrt(static_cast<float>(shape_.col_rows()));
  for (Param* p : params_) ops::uniform_fill(rng, -bound, bound, p->value.data(), p->value.numel());
}

ops::Conv2dGeometry Conv2d::geometry(int64_t batch) const {
  ops::Conv2dGeometry g = shape_;
  g.batch = batch;
  return g;
}

void Conv2d::forward(const std::vector<const Tensor*>& in, Tensor& out, Saved& saved,
                     const LayerContext& ctx) {
  (void)saved;  // backward recomputes im2col from the input instead of keeping it
  const Tensor& x = *in[0];
  const ops::Conv2dGeometry g = geometry(x.dim(0));
  out = ctx.empty({g.batch, g.out_channels, g.out_h(), g.out_w()});
  const float* bias = has_bias_ ? params_[1]->value.device_ptr() : nullptr;
  const Tensor workspace = ctx.workspace(ctx.ops->conv2d_scratch_floats(g, bias != nullptr));
  if (relu_)
    ctx.ops->conv2d_relu_forward(g, x.device_ptr(), params_[0]->value.device_ptr(), bias,
                                 out.device_ptr(), ctx.scratch(workspace));
  else
    ctx.ops->conv2d_forward(g, x.device_ptr(), params_[0]->value.device_ptr(), bias,
                            out.device_ptr(), ctx.scratch(workspace));
}

void Conv2d::backward(const std::vector<const Tensor*>& in, const Tensor& out, const Tensor& dout,
                      const std::vector<Tensor*>& din, Saved& saved, const LayerContext& ctx) {
  (void)saved;
  const Tensor& x = *in[0];
  const ops::Conv2dGeometry g = geometry(x.dim(0));
  float* dx = nullptr;
  if (din[0]) {
    *din[0] = ctx.empty(x.shape());
    dx = din[0]->device_ptr();
  }
  // The input's half passes dbias all the same: it picks the same kernels as the whole pass.
  float* dw =
      ctx.backward_part != BackwardPart::InputGradient ? params_[0]->grad.device_ptr() : nullptr;
  float* dbias = has_bias_ ? params_[1]->grad.device_ptr() : nullptr;
  const float* dy = dout.device_ptr();
  Tensor masked;
  if (relu_mask_) {  // the fused ReLU's backward, when no pooling after it took the mask
    masked = ctx.empty(dout.shape());
    ctx.ops->relu_backward(out.device_ptr(), dy, masked.device_ptr(), masked.numel());
    dy = masked.device_ptr();
  }
  const Tensor workspace = ctx.workspace(ctx.ops->conv2d_scratch_floats(g, dbias != nullptr));
  ctx.ops->conv2d_backward(g, x.device_ptr(), params_[0]->value.device_ptr(), dy, dx, dw, dbias,
                           ctx.scratch(workspace));
}

void Conv2d::fuse_relu_epilogue(bool mask_gradient) {
  relu_ = true;
  relu_mask_ = mask_gradient;
}

double Conv2d::flops_per_sample() const {
  const double macs = double(shape_.out_channels) * double(shape_.out_pixels()) * shape_.col_rows();
  return 3.0 * 2.0 * macs;
}

WT_REGISTER_LAYER("conv2d", Conv2d);

}  // namespace wt

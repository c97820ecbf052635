#pragma once
// What maxpool2d and avgpool2d share: the keys kernel, stride (default = kernel) and padding,
// PyTorch's padding rule, and the [C, H, W] -> [C, H', W'] shape inference.
#include <stdexcept>
#include <string>

#include "model/layer.hpp"
#include "model/layer_args.hpp"
#include "ops/kernel_args.hpp"

namespace wt {

class Pool2dBase : public Layer {
 public:
  explicit Pool2dBase(const LayerArgs& args) {
    shape_.kernel = args.get_int("kernel", 1, 1024);
    shape_.stride = args.get_int("stride", shape_.kernel, 1, 1024);
    shape_.padding = args.get_int("padding", 0, 0, 1024);
    if (2 * shape_.padding > shape_.kernel)
      args.fail("padding", "must be at most half the kernel (" + std::to_string(shape_.kernel) +
                               "), as in PyTorch");
  }

  Shape infer(const std::vector<Shape>& inputs) override {
    if (inputs.size() != 1) throw std::invalid_argument(std::string(type()) + " takes one input");
    if (inputs[0].size() != 3)
      throw std::invalid_argument(std::string(type()) + " expects an image input [C, H, W], got " +
                                  shape_str(inputs[0]));
    shape_.channels = inputs[0][0];
    shape_.in_h = inputs[0][1];
    shape_.in_w = inputs[0][2];
    if (shape_.in_h + 2 * shape_.padding < shape_.kernel ||
        shape_.in_w + 2 * shape_.padding < shape_.kernel)
      throw std::invalid_argument(std::string(type()) + " kernel " + std::to_string(shape_.kernel) +
                                  " is larger than the input " + shape_str(inputs[0]));
    return {shape_.channels, shape_.out_h(), shape_.out_w()};
  }

  double flops_per_sample() const override {
    // One operation per window cell, forward and backward.
    return 2.0 * double(shape_.channels) * shape_.out_h() * shape_.out_w() * shape_.kernel *
           shape_.kernel;
  }

  // Allocation and argument plumbing are the same for every pooling kind; only the kernels differ.
  void forward(const std::vector<const Tensor*>& in, Tensor& out, Saved& saved,
               const LayerContext& ctx) final {
    (void)saved;
    const Tensor& x = *in[0];
    out = ctx.empty({x.dim(0), shape_.channels, shape_.out_h(), shape_.out_w()});
    pool_forward(*ctx.ops, geometry(x.dim(0)), x.device_ptr(), out.device_ptr());
  }
  void backward(const std::vector<const Tensor*>& in, const Tensor& out, const Tensor& dout,
                const std::vector<Tensor*>& din, Saved& saved, const LayerContext& ctx) final {
    (void)out;
    (void)saved;
    if (!din[0]) return;
    const Tensor& x = *in[0];
    *din[0] = ctx.empty(x.shape());
    pool_backward(*ctx.ops, geometry(x.dim(0)), x.device_ptr(), dout.device_ptr(),
                  din[0]->device_ptr());
  }

 protected:
  virtual void pool_forward(const OpsBackend& ops, const ops::Pool2dGeometry& g, const float* x,
                            float* y) = 0;
  // dx is overwritten; x is the forward input.
  virtual void pool_backward(const OpsBackend& ops, const ops::Pool2dGeometry& g, const float* x,
                             const float* dy, float* dx) = 0;

  ops::Pool2dGeometry geometry(int64_t batch) const {
    ops::Pool2dGeometry g = shape_;
    g.batch = batch;
    return g;
  }
  ops::Pool2dGeometry shape_;  // batch left 0; filled per call
};

}  // namespace wt

#pragma once
// 2-D convolution over NCHW: [C, H, W] -> [out_channels, H', W'], square kernel, PyTorch layouts
// (weight [out, C, k, k], bias [out]). The math is the device's (OpsBackend::conv2d_forward:
// on the host, oneDNN where it implements the geometry, else chunked im2col + GEMM).
#include "model/layer.hpp"
#include "model/layer_args.hpp"
#include "ops/kernel_args.hpp"

namespace wt {

class Conv2d : public Layer {
 public:
  explicit Conv2d(const LayerArgs& args);
  const char* type() const override { return "conv2d"; }
  Shape infer(const std::vector<Shape>& inputs) override;
  std::vector<ParamSpec> param_specs() const override;
  void init(Rng& rng) override;
  void forward(const std::vector<const Tensor*>& in, Tensor& out, Saved& saved,
               const LayerContext& ctx) override;
  void backward(const std::vector<const Tensor*>& in, const Tensor& out, const Tensor& dout,
                const std::vector<Tensor*>& din, Saved& saved, const LayerContext& ctx) override;
  bool splits_backward() const override { return true; }
  double flops_per_sample() const override;
  bool can_fuse_relu_epilogue() const override { return true; }
  void fuse_relu_epilogue(bool mask_gradient) override;
  bool can_block_input() const override { return true; }
  bool can_block_output(bool) const override { return true; }
  void block_channels(bool input, bool output) override {
    shape_.x_blocked = input;
    shape_.y_blocked = output;
  }

 private:
  ops::Conv2dGeometry geometry(int64_t batch) const;

  ops::Conv2dGeometry shape_;  // batch left 0; filled per call
  bool has_bias_;
  bool relu_ = false;       // a fused ReLU: the output is relu(conv(x) + bias)
  bool relu_mask_ = false;  // backward masks the output gradient with it
};

}  // namespace wt

#pragma once
// 2-D convolution over NCHW: [C, H, W] -> [out_channels, H', W'], square kernel, PyTorch layouts
// (weight [out, C, k, k], bias [out]). The math is oneDNN's convolution primitives
// (ops/host/conv2d_dnnl) when built with oneDNN and it implements the geometry, else
// ops/host/conv2d (chunked im2col + GEMM).
#include "model/layer.hpp"
#include "model/layer_args.hpp"
#include "ops/host/conv2d.hpp"

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
  double flops_per_sample() const override;

 private:
  ops::Conv2dGeometry geometry(int64_t batch) const;
  Tensor workspace(const ops::Conv2dGeometry& g, int64_t chunk, const LayerContext& ctx) const;

  ops::Conv2dGeometry shape_;  // batch left 0; filled per call
  bool has_bias_;
};

}  // namespace wt

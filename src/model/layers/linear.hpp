#pragma once
// Fully connected layer: [F] -> [out_features] per sample, weight [out, F] and bias [out] as in
// PyTorch; a sequence [T, F] -> [T, out_features] is projected token by token.
#include "model/layer.hpp"
#include "model/layer_args.hpp"

namespace wt {

class Linear : public Layer {
 public:
  explicit Linear(const LayerArgs& args);
  const char* type() const override { return "linear"; }
  Shape infer(const std::vector<Shape>& inputs) override;
  std::vector<ParamSpec> param_specs() const override;
  void init(Rng& rng) override;
  void forward(const std::vector<const Tensor*>& in, Tensor& out, Saved& saved,
               const LayerContext& ctx) override;
  void backward(const std::vector<const Tensor*>& in, const Tensor& out, const Tensor& dout,
                const std::vector<Tensor*>& din, Saved& saved, const LayerContext& ctx) override;
  double flops_per_sample() const override;
  bool can_fuse_relu_epilogue() const override { return true; }
  void fuse_relu_epilogue(bool mask_gradient) override;

 private:
  int64_t out_features_;
  bool has_bias_;
  int64_t in_features_ = 0;
  int64_t rows_per_sample_ = 1;  // T for a sequence input
  bool relu_ = false;            // a fused ReLU: the output is relu(x W^T + b)
  bool relu_mask_ = false;       // backward masks the output gradient with it
};

}  // namespace wt

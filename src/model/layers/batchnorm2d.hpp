#pragma once
// batchnorm2d over [C, H, W] samples, as torch.nn.BatchNorm2d: keys momentum (0.1), eps (1e-5).
// Params weight [C] (init 1), bias [C] (init 0); buffers running_mean [C] (0), running_var [C]
// (1). Train normalises with batch statistics and updates the running ones; Eval uses the
// running ones.
#include "model/layer.hpp"
#include "model/layer_args.hpp"

namespace wt {

class BatchNorm2d : public Layer {
 public:
  explicit BatchNorm2d(const LayerArgs& args);
  const char* type() const override { return "batchnorm2d"; }
  Shape infer(const std::vector<Shape>& inputs) override;
  std::vector<ParamSpec> param_specs() const override;
  std::vector<ParamSpec> buffer_specs() const override;
  void init(Rng& rng) override;
  void forward(const std::vector<const Tensor*>& in, Tensor& out, Saved& saved,
               const LayerContext& ctx) override;
  void backward(const std::vector<const Tensor*>& in, const Tensor& out, const Tensor& dout,
                const std::vector<Tensor*>& din, Saved& saved, const LayerContext& ctx) override;
  double flops_per_sample() const override;

 private:
  float momentum_;
  float eps_;
  int64_t channels_ = 0;
  int64_t spatial_ = 0;  // H * W
};

}  // namespace wt

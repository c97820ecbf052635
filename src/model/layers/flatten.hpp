#pragma once
// [...] -> [prod]. No copy: forward's output and backward's input gradient are reshaped views of
// the incoming tensor's storage (NCHW is already sample-major and contiguous).
#include "model/layer.hpp"
#include "model/layer_args.hpp"

namespace wt {

class Flatten : public Layer {
 public:
  explicit Flatten(const LayerArgs& args) { (void)args; }
  const char* type() const override { return "flatten"; }
  Shape infer(const std::vector<Shape>& inputs) override;
  void forward(const std::vector<const Tensor*>& in, Tensor& out, Saved& saved,
               const LayerContext& ctx) override;
  void backward(const std::vector<const Tensor*>& in, const Tensor& out, const Tensor& dout,
                const std::vector<Tensor*>& din, Saved& saved, const LayerContext& ctx) override;

 private:
  int64_t features_ = 0;
};

}  // namespace wt

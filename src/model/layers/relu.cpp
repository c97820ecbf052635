#include "model/layers/relu.hpp"

#include <stdexcept>

#include "model/layer_registry.hpp"
#include "ops/host/elementwise.hpp"

namespace wt {

Relu::Relu(const LayerArgs& args) { (void)args; }

Shape Relu::infer(const std::vector<Shape>& inputs) {
  if (inputs.size() != 1)
    throw std::invalid_argument("relu takes exactly one input, got " +
                                std::to_string(inputs.size()));
  sample_numel_ = shape_numel(inputs[0]);
  return inputs[0];
}

void Relu::forward(const std::vector<const Tensor*>& in, Tensor& out, Saved& saved,
                   const LayerContext& ctx) {
  (void)saved;
  out = Tensor::empty(in[0]->shape(), ctx.stream);
  ops::relu_forward(in[0]->data(), out.data(), out.numel());
}

void Relu::backward(const std::vector<const Tensor*>& in, const Tensor& out, const Tensor& dout,
                    const std::vector<Tensor*>& din, Saved& saved, const LayerContext& ctx) {
  (void)in;
  (void)saved;
  if (!din[0]) return;
  *din[0] = Tensor::empty(out.shape(), ctx.stream);
  ops::relu_backward(out.data(), dout.data(), din[0]->data(), out.numel());
}

// One compare per element forward; backward is the same again twice over (x3 convention).
double Relu::flops_per_sample() const { return 3.0 * static_cast<double>(sample_numel_); }

WT_REGISTER_LAYER("relu", Relu);

}  // namespace wt

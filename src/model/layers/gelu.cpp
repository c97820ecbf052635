#include "model/layers/gelu.hpp"

#include <stdexcept>

#include "model/layer_registry.hpp"
#include "ops/host/elementwise.hpp"

namespace wt {

Gelu::Gelu(const LayerArgs& args) { (void)args; }

Shape Gelu::infer(const std::vector<Shape>& inputs) {
  if (inputs.size() != 1)
    throw std::invalid_argument("gelu takes exactly one input, got " +
                                std::to_string(inputs.size()));
  sample_numel_ = shape_numel(inputs[0]);
  return inputs[0];
}

void Gelu::forward(const std::vector<const Tensor*>& in, Tensor& out, Saved& saved,
                   const LayerContext& ctx) {
  (void)saved;
  out = Tensor::empty(in[0]->shape(), ctx.stream);
  ops::gelu_forward(in[0]->data(), out.data(), out.numel());
}

void Gelu::backward(const std::vector<const Tensor*>& in, const Tensor& out, const Tensor& dout,
                    const std::vector<Tensor*>& din, Saved& saved, const LayerContext& ctx) {
  (void)out;
  (void)saved;
  if (!din[0]) return;
  *din[0] = Tensor::empty(in[0]->shape(), ctx.stream);
  ops::gelu_backward(in[0]->data(), dout.data(), din[0]->data(), in[0]->numel());
}

// About 10 flops per element forward (erf counted as a handful), x3 for forward + backward.
double Gelu::flops_per_sample() const { return 30.0 * static_cast<double>(sample_numel_); }

WT_REGISTER_LAYER("gelu", Gelu);

}  // namespace wt

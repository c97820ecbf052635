#include "model/layers/flatten.hpp"

#include <stdexcept>

#include "model/layer_registry.hpp"

namespace wt {

Shape Flatten::infer(const std::vector<Shape>& inputs) {
  if (inputs.size() != 1) throw std::invalid_argument("flatten takes exactly one input");
  features_ = shape_numel(inputs[0]);
  return {features_};
}

void Flatten::forward(const std::vector<const Tensor*>& in, Tensor& out, Saved& saved,
                      const LayerContext& ctx) {
  (void)saved;
  (void)ctx;
  out = in[0]->reshaped({in[0]->dim(0), features_});
}

void Flatten::backward(const std::vector<const Tensor*>& in, const Tensor& out, const Tensor& dout,
                       const std::vector<Tensor*>& din, Saved& saved, const LayerContext& ctx) {
  (void)out;
  (void)saved;
  (void)ctx;
  if (din[0]) *din[0] = dout.reshaped(in[0]->shape());
}

WT_REGISTER_LAYER("flatten", Flatten);

}  // namespace wt

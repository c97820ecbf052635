#include "model/layers/add.hpp"

#include <stdexcept>

#include "model/layer_registry.hpp"

namespace wt {

Add::Add(const LayerArgs& args) { (void)args; }

Shape Add::infer(const std::vector<Shape>& inputs) {
  if (inputs.size() < 2)
    throw std::invalid_argument("add needs two or more inputs (inputs = [\"a\", \"b\"]), got " +
                                std::to_string(inputs.size()));
  for (size_t i = 1; i < inputs.size(); ++i)
    if (inputs[i] != inputs[0])
      throw std::invalid_argument("add inputs must have the same shape, got " +
                                  shape_str(inputs[0]) + " and " + shape_str(inputs[i]));
  sample_numel_ = shape_numel(inputs[0]);
  input_count_ = static_cast<int64_t>(inputs.size());
  return inputs[0];
}

void Add::forward(const std::vector<const Tensor*>& in, Tensor& out, Saved& saved,
                  const LayerContext& ctx) {
  (void)saved;
  out = ctx.empty(in[0]->shape());
  // At most a handful of inputs: a small stack array avoids a heap allocation per step.
  constexpr size_t kMaxInline = 8;
  const float* inline_ptrs[kMaxInline];
  std::vector<const float*> heap_ptrs;
  const float** ptrs = inline_ptrs;
  if (in.size() > kMaxInline) {
    heap_ptrs.resize(in.size());
    ptrs = heap_ptrs.data();
  }
  for (size_t i = 0; i < in.size(); ++i) ptrs[i] = in[i]->device_ptr();
  ctx.ops->sum_arrays(ptrs, static_cast<int>(in.size()), out.device_ptr(), out.numel());
}

void Add::backward(const std::vector<const Tensor*>& in, const Tensor& out, const Tensor& dout,
                   const std::vector<Tensor*>& din, Saved& saved, const LayerContext& ctx) {
  (void)in;
  (void)out;
  (void)saved;
  // Every input receives dout unchanged. A copy rather than a shared block, so that a caller
  // accumulating into one din cannot corrupt another.
  for (Tensor* d : din) {
    if (!d) continue;
    *d = ctx.empty(dout.shape());
    ctx.ops->copy(dout.device_ptr(), d->device_ptr(), dout.numel());
  }
}

// (inputs - 1) adds per element forward, x3 for forward + backward.
double Add::flops_per_sample() const {
  return 3.0 * static_cast<double>((input_count_ - 1) * sample_numel_);
}

WT_REGISTER_LAYER("add", Add);

}  // namespace wt

#include "model/layers/dropout.hpp"

#include <algorithm>
#include <stdexcept>

#include "model/layer_registry.hpp"

namespace wt {

Dropout::Dropout(const LayerArgs& args)
    : p_(static_cast<float>(args.get_float("p", 0.5, 0.0, 1.0))) {
  // p = 1 would drop everything and scale the survivors by 1/0.
  if (p_ >= 1.0f) args.fail("p", "must be in [0, 1)");
}

Shape Dropout::infer(const std::vector<Shape>& inputs) {
  if (inputs.size() != 1)
    throw std::invalid_argument("dropout takes exactly one input, got " +
                                std::to_string(inputs.size()));
  sample_numel_ = shape_numel(inputs[0]);
  return inputs[0];
}

void Dropout::forward(const std::vector<const Tensor*>& in, Tensor& out, Saved& saved,
                      const LayerContext& ctx) {
  const Tensor& x = *in[0];
  out = ctx.empty(x.shape());
  saved.tensors.clear();
  if (ctx.mode == Mode::Eval || p_ == 0.0f) {
    ctx.ops->copy(x.device_ptr(), out.device_ptr(), x.numel());
    return;
  }
  if (!ctx.rng) throw std::logic_error("dropout '" + name() + "': train mode needs ctx.rng");
  Tensor mask = ctx.empty(x.shape());
  // One generator per sample, from the batch's generator, the node and the sample's global index:
  // data parallelism on any number of ranks draws the masks one rank draws.
  ops::DropoutMasks d;
  d.p = p_;
  d.key = ctx.rng->state();
  d.step_key = ctx.pinned_rng_state;
  d.salt = (uint64_t(ctx.node) + 1) * 0xD6E8FEB86659FD93ull;
  d.rows = x.dim(0);
  d.per_row = x.numel() / std::max<int64_t>(1, d.rows);
  if (!ctx.samples) {  // consecutive samples: one launch
    d.first_sample = ctx.first_sample;
    ctx.ops->dropout_masks(d, mask.device_ptr());
  } else {  // rows gathered from anywhere in the batch (burst): a launch per row
    const int64_t rows = d.rows;
    d.rows = 1;
    for (int64_t r = 0; r < rows; ++r) {
      d.first_sample = ctx.sample_index(r);
      ctx.ops->dropout_masks(d, mask.device_ptr() + r * d.per_row);
    }
  }
  ctx.ops->multiply(x.device_ptr(), mask.device_ptr(), out.device_ptr(), x.numel());
  saved.tensors.push_back(std::move(mask));
}

void Dropout::backward(const std::vector<const Tensor*>& in, const Tensor& out, const Tensor& dout,
                       const std::vector<Tensor*>& din, Saved& saved, const LayerContext& ctx) {
  (void)in;
  (void)out;
  if (!din[0]) return;
  *din[0] = ctx.empty(dout.shape());
  if (saved.tensors.empty()) {  // forward was the identity
    ctx.ops->copy(dout.device_ptr(), din[0]->device_ptr(), dout.numel());
    return;
  }
  ctx.ops->multiply(dout.device_ptr(), saved.tensors[0].device_ptr(), din[0]->device_ptr(),
                    dout.numel());
}

// One multiply per element forward, x3 for forward + backward.
double Dropout::flops_per_sample() const { return 3.0 * static_cast<double>(sample_numel_); }

WT_REGISTER_LAYER("dropout", Dropout);

}  // namespace wt

#include "model/layers/global_avgpool.hpp"

#include <stdexcept>

#include "model/layer_registry.hpp"

namespace wt {

Shape GlobalAvgPool::infer(const std::vector<Shape>& inputs) {
  if (inputs.size() != 1) throw std::invalid_argument("global_avgpool takes exactly one input");
  if (inputs[0].size() < 2)
    throw std::invalid_argument("global_avgpool expects [C, H, W], got " + shape_str(inputs[0]));
  channels_ = inputs[0][0];
  pixels_ = shape_numel(inputs[0]) / channels_;
  if (pixels_ == 0) throw std::invalid_argument("global_avgpool input has no spatial positions");
  return {channels_};
}

void GlobalAvgPool::forward(const std::vector<const Tensor*>& in, Tensor& out, Saved& saved,
                            const LayerContext& ctx) {
  (void)saved;
  const Tensor& x = *in[0];
  out = ctx.empty({x.dim(0), channels_});
  ctx.ops->global_avgpool_forward(x.dim(0), channels_, pixels_, x.device_ptr(), out.device_ptr());
}

void GlobalAvgPool::backward(const std::vector<const Tensor*>& in, const Tensor& out,
                             const Tensor& dout, const std::vector<Tensor*>& din, Saved& saved,
                             const LayerContext& ctx) {
  (void)out;
  (void)saved;
  if (!din[0]) return;
  const Tensor& x = *in[0];
  *din[0] = ctx.empty(x.shape());
  ctx.ops->global_avgpool_backward(x.dim(0), channels_, pixels_, dout.device_ptr(),
                                   din[0]->device_ptr());
}

WT_REGISTER_LAYER("global_avgpool", GlobalAvgPool);

}  // namespace wt

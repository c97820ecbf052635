#include "model/layers/avgpool2d.hpp"

#include "model/layer_registry.hpp"

namespace wt {

void AvgPool2d::forward(const std::vector<const Tensor*>& in, Tensor& out, Saved& saved,
                        const LayerContext& ctx) {
  (void)saved;
  const Tensor& x = *in[0];
  out = allocate_output(x.dim(0), ctx.stream);
  ops::avgpool2d_forward(geometry(x.dim(0)), x.data(), out.data());
}

void AvgPool2d::backward(const std::vector<const Tensor*>& in, const Tensor& out,
                         const Tensor& dout, const std::vector<Tensor*>& din, Saved& saved,
                         const LayerContext& ctx) {
  (void)out;
  (void)saved;
  if (!din[0]) return;
  const Tensor& x = *in[0];
  const ops::Pool2dGeometry g = geometry(x.dim(0));
  *din[0] = Tensor::empty(x.shape(), ctx.stream);
  ops::avgpool2d_backward(g, dout.data(), din[0]->data());
}

WT_REGISTER_LAYER("avgpool2d", AvgPool2d);

}  // namespace wt

// Pooling of CudaOps: the portable kernels (ops/portable/pool2d.hpp) on the GPU, so the window and
// tie rules are the host's exactly.
#include <stdexcept>

#include "ops/cuda/cuda_launch.cuh"
#include "ops/cuda/cuda_ops_impl.cuh"
#include "ops/portable/pool2d.hpp"

namespace wt::cuda {

void CudaOps::maxpool2d_forward(const ops::Pool2dGeometry& g, const float* x, float* y) const {
  cuda_for(impl_->stream, g.batch * g.channels * g.out_h() * g.out_w(),
           kern::MaxPoolForward{g, x, y});
}

// The backwards: over output windows where they tile the image (kern::pool_windows_tile: every
// shipped model's pooling), else one gather per input cell.
namespace {
int64_t outputs(const ops::Pool2dGeometry& g) {
  return g.batch * g.channels * g.out_h() * g.out_w();
}
int64_t inputs(const ops::Pool2dGeometry& g) { return g.batch * g.channels * g.in_h * g.in_w; }
// CudaOps takes NCHW activations only (takes_blocked_activations() is false): the kernels index so.
void require_nchw(const ops::Pool2dGeometry& g) {
  if (g.x_blocked || g.y_blocked)
    throw std::logic_error("cuda pooling: a channel-blocked layout, which CudaOps never takes");
}
}  // namespace

void CudaOps::maxpool2d_backward(const ops::Pool2dGeometry& g, const float* x, const float* dy,
                                 float* dx) const {
  require_nchw(g);
  if (kern::pool_windows_tile(g))
    cuda_for(impl_->stream, outputs(g), kern::MaxPoolBackwardTiled<false>{g, x, dy, dx});
  else
    cuda_for(impl_->stream, inputs(g), kern::MaxPoolBackward{g, x, dy, dx});
}

// With the ReLU's mask in the same pass (kern::MaxPoolReluBackward).
void CudaOps::maxpool2d_relu_backward(const ops::Pool2dGeometry& g, const float* x, const float* dy,
                                      float* dx) const {
  require_nchw(g);
  if (kern::pool_windows_tile(g))
    cuda_for(impl_->stream, outputs(g), kern::MaxPoolBackwardTiled<true>{g, x, dy, dx});
  else
    cuda_for(impl_->stream, inputs(g), kern::MaxPoolReluBackward{{g, x, dy, dx}});
}

void CudaOps::avgpool2d_forward(const ops::Pool2dGeometry& g, const float* x, float* y) const {
  cuda_for(impl_->stream, g.batch * g.channels * g.out_h() * g.out_w(),
           kern::AvgPoolForward{g, x, y});
}

void CudaOps::avgpool2d_backward(const ops::Pool2dGeometry& g, const float* dy, float* dx) const {
  require_nchw(g);
  if (kern::pool_windows_tile(g))
    cuda_for(impl_->stream, outputs(g), kern::AvgPoolBackwardTiled{g, dy, dx});
  else
    cuda_for(impl_->stream, inputs(g), kern::AvgPoolBackward{g, dy, dx});
}

}  // namespace wt::cuda

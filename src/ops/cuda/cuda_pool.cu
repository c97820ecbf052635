// Pooling of CudaOps: the portable kernels (ops/portable/pool2d.hpp) on the GPU, so the window and
// tie rules are the host's exactly.
#include "ops/cuda/cuda_launch.cuh"
#include "ops/cuda/cuda_ops_impl.cuh"
#include "ops/portable/pool2d.hpp"

namespace wt::cuda {

void CudaOps::maxpool2d_forward(const ops::Pool2dGeometry& g, const float* x, float* y) const {
  cuda_for(impl_->stream, g.batch * g.channels * g.out_h() * g.out_w(),
           kern::MaxPoolForward{g, x, y});
}

void CudaOps::maxpool2d_backward(const ops::Pool2dGeometry& g, const float* x, const float* dy,
                                 float* dx) const {
  cuda_for(impl_->stream, g.batch * g.channels * g.in_h * g.in_w,
           kern::MaxPoolBackward{g, x, dy, dx});
}

// One gather pass per input cell with the ReLU's mask (kern::MaxPoolReluBackward).
void CudaOps::maxpool2d_relu_backward(const ops::Pool2dGeometry& g, const float* x, const float* dy,
                                      float* dx) const {
  cuda_for(impl_->stream, g.batch * g.channels * g.in_h * g.in_w,
           kern::MaxPoolReluBackward{{g, x, dy, dx}});
}

void CudaOps::avgpool2d_forward(const ops::Pool2dGeometry& g, const float* x, float* y) const {
  cuda_for(impl_->stream, g.batch * g.channels * g.out_h() * g.out_w(),
           kern::AvgPoolForward{g, x, y});
}

void CudaOps::avgpool2d_backward(const ops::Pool2dGeometry& g, const float* dy, float* dx) const {
  cuda_for(impl_->stream, g.batch * g.channels * g.in_h * g.in_w, kern::AvgPoolBackward{g, dy, dx});
}

}  // namespace wt::cuda

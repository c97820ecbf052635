// Pooling and batch normalisation of CudaOps: the portable kernels (ops/portable/pool2d.hpp,
// batchnorm.hpp) on the GPU, so the window, tie and variance rules are the host's exactly.
#include <stdexcept>

#include "ops/cuda/cuda_launch.cuh"
#include "ops/cuda/cuda_ops_impl.cuh"
#include "ops/portable/batchnorm.hpp"
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

void CudaOps::avgpool2d_forward(const ops::Pool2dGeometry& g, const float* x, float* y) const {
  cuda_for(impl_->stream, g.batch * g.channels * g.out_h() * g.out_w(),
           kern::AvgPoolForward{g, x, y});
}

void CudaOps::avgpool2d_backward(const ops::Pool2dGeometry& g, const float* dy, float* dx) const {
  cuda_for(impl_->stream, g.batch * g.channels * g.in_h * g.in_w, kern::AvgPoolBackward{g, dy, dx});
}

void CudaOps::batchnorm_forward_train(const float* x, const ops::BatchNormShape& s,
                                      const float* gamma, const float* beta, float eps,
                                      float momentum, float* running_mean, float* running_var,
                                      float* mean, float* invstd, float* y) const {
  if (s.n * s.hw < 2)
    throw std::invalid_argument("batchnorm2d in train mode needs more than one value per channel");
  cuda_for(impl_->stream, s.c,
           kern::BatchNormStatistics{x, s, eps, momentum, running_mean, running_var, mean, invstd});
  cuda_for(impl_->stream, s.n * s.c, kern::BatchNormNormalise{x, s, gamma, beta, mean, invstd, y});
}

void CudaOps::batchnorm_forward_eval(const float* x, const ops::BatchNormShape& s,
                                     const float* gamma, const float* beta,
                                     const float* running_mean, const float* running_var, float eps,
                                     float* mean, float* invstd, float* y) const {
  cuda_for(impl_->stream, s.c,
           kern::BatchNormRunningStatistics{running_mean, running_var, eps, mean, invstd});
  cuda_for(impl_->stream, s.n * s.c, kern::BatchNormNormalise{x, s, gamma, beta, mean, invstd, y});
}

void CudaOps::batchnorm_backward(const float* x, const float* dy, const ops::BatchNormShape& s,
                                 const float* gamma, const float* mean, const float* invstd,
                                 bool batch_stats, float* dx, float* dgamma, float* dbeta) const {
  cuda_for(impl_->stream, s.c,
           kern::BatchNormBackward{x, dy, s, gamma, mean, invstd, batch_stats, dx, dgamma, dbeta});
}

}  // namespace wt::cuda

// Batch normalisation of CudaOps in the block form (ops/portable/batchnorm_blocks.hpp): each
// channel's n * hw values are cut into chunks of about kValuesPerThread values a thread, one block
// each, so resnet's first layers spread over thousands of blocks instead of one thread per
// channel. Two launches per op: the blocks' partial sums (cuda_reduce.cuh), then a pass in which
// every block joins its channel's partials in the same fixed tree (so all agree bitwise) and
// writes its chunk of y or dx; the channel's first block stores the per-channel results.
#include <stdexcept>

#include "ops/cuda/cuda_launch.cuh"
#include "ops/cuda/cuda_ops_impl.cuh"
#include "ops/cuda/cuda_reduce.cuh"
#include "ops/portable/batchnorm_blocks.hpp"

namespace wt::cuda {
namespace {

constexpr int64_t kValuesPerThread = 16;

kern::SegmentPlan channel_plan(const ops::BatchNormShape& s, int64_t max_partials) {
  return kern::plan_segments(s.c, s.n * s.hw, kValuesPerThread, max_partials);
}

__global__ void batchnorm_train_normalise_kernel(kern::SegmentPlan plan,
                                                 kern::BatchNormStatistics stats,
                                                 const float* gamma, const float* beta,
                                                 const kern::Moments* partials, float* y) {
  const int64_t c = blockIdx.x / plan.blocks, block = blockIdx.x % plan.blocks;
  const kern::Moments m = join_partials(partials + c * plan.blocks, plan.blocks);
  const float mu = static_cast<float>(m.mean);
  if (block == 0 && threadIdx.x == 0) stats.store(c, mu, m.m2);
  const kern::AffineTerms t = kern::batchnorm_affine(gamma, beta, c, mu, stats.invstd_of(m.m2));
  kern::batchnorm_normalise_share(stats.x, stats.s, c, plan.begin(block) + threadIdx.x,
                                  plan.end(block), kern::kTreeThreads, t, y);
}

__global__ void batchnorm_eval_normalise_kernel(kern::SegmentPlan plan, const float* x,
                                                ops::BatchNormShape s, const float* gamma,
                                                const float* beta, const float* mean,
                                                const float* invstd, float* y) {
  const int64_t c = blockIdx.x / plan.blocks, block = blockIdx.x % plan.blocks;
  const kern::AffineTerms t = kern::batchnorm_affine(gamma, beta, c, mean[c], invstd[c]);
  kern::batchnorm_normalise_share(x, s, c, plan.begin(block) + threadIdx.x, plan.end(block),
                                  kern::kTreeThreads, t, y);
}

// `launched` blocks per channel: the plan's (dx written chunk by chunk) or 1 (no dx: only the
// parameter gradients).
__global__ void batchnorm_backward_kernel(kern::SegmentPlan plan, int64_t launched,
                                          kern::BatchNormBackward bwd,
                                          const kern::Sum2d* partials) {
  const int64_t c = blockIdx.x / launched, block = blockIdx.x % launched;
  const kern::Sum2d sums = join_partials(partials + c * plan.blocks, plan.blocks);
  if (block == 0 && threadIdx.x == 0) bwd.accumulate_param_grads(c, sums.a, sums.b);
  if (!bwd.dx) return;
  kern::batchnorm_dx_share(bwd.x, bwd.dy, bwd.s, c, plan.begin(block) + threadIdx.x,
                           plan.end(block), kern::kTreeThreads, bwd.dx_terms(c, sums.a, sums.b),
                           bwd.dx);
}

}  // namespace

void CudaOps::batchnorm_forward_train(const float* x, const ops::BatchNormShape& s,
                                      const float* gamma, const float* beta, float eps,
                                      float momentum, float* running_mean, float* running_var,
                                      float* mean, float* invstd, float* y) const {
  if (s.n * s.hw < 2)
    throw std::invalid_argument("batchnorm2d in train mode needs more than one value per channel");
  if (s.c <= 0) return;
  const auto plan = channel_plan(s, impl_->partials.capacity<kern::Moments>());
  auto* partials = impl_->partials.as<kern::Moments>(plan.grid(), "batchnorm_forward_train");
  launch_segment_partials(impl_->stream, plan, kern::BatchNormMomentsShare{x, s}, partials);
  const kern::BatchNormStatistics stats{x,           s,    eps,   momentum, running_mean,
                                        running_var, mean, invstd};
  batchnorm_train_normalise_kernel<<<unsigned(plan.grid()), kern::kTreeThreads, 0, impl_->stream>>>(
      plan, stats, gamma, beta, partials, y);
  WT_CUDA_CHECK(cudaGetLastError());
}

void CudaOps::batchnorm_forward_eval(const float* x, const ops::BatchNormShape& s,
                                     const float* gamma, const float* beta,
                                     const float* running_mean, const float* running_var, float eps,
                                     float* mean, float* invstd, float* y) const {
  if (s.c <= 0) return;
  cuda_for(impl_->stream, s.c,
           kern::BatchNormRunningStatistics{running_mean, running_var, eps, mean, invstd});
  const auto plan = channel_plan(s, impl_->partials.capacity<kern::Moments>());
  batchnorm_eval_normalise_kernel<<<unsigned(plan.grid()), kern::kTreeThreads, 0, impl_->stream>>>(
      plan, x, s, gamma, beta, mean, invstd, y);
  WT_CUDA_CHECK(cudaGetLastError());
}

void CudaOps::batchnorm_backward(const float* x, const float* dy, const ops::BatchNormShape& s,
                                 const float* gamma, const float* mean, const float* invstd,
                                 bool batch_stats, float* dx, float* dgamma, float* dbeta) const {
  if (s.c <= 0) return;
  const auto plan = channel_plan(s, impl_->partials.capacity<kern::Sum2d>());
  auto* partials = impl_->partials.as<kern::Sum2d>(plan.grid(), "batchnorm_backward");
  launch_segment_partials(impl_->stream, plan, kern::BatchNormGradShare{x, dy, s, mean}, partials);
  const kern::BatchNormBackward bwd{x, dy, s, gamma, mean, invstd, batch_stats, dx, dgamma, dbeta};
  const int64_t launched = dx ? plan.blocks : 1;
  batchnorm_backward_kernel<<<unsigned(s.c * launched), kern::kTreeThreads, 0, impl_->stream>>>(
      plan, launched, bwd, partials);
  WT_CUDA_CHECK(cudaGetLastError());
}

}  // namespace wt::cuda

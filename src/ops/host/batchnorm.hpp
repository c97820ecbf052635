#pragma once
// Batch normalisation over NCHW data, per channel c over the n * hw values of that channel
// (PyTorch BatchNorm2d semantics). Forward records the mean and 1/sqrt(var + eps) it normalised
// with, so backward needs no recomputation and no per-call allocation.
#include <cstdint>

#include "ops/kernel_args.hpp"

namespace wt::ops {

// Train mode: normalise with the batch statistics (biased variance), write them to mean[c] and
// invstd[c], and update the running statistics like PyTorch:
//   running_mean = (1 - momentum) * running_mean + momentum * mean
//   running_var  = (1 - momentum) * running_var  + momentum * var * m / (m - 1),  m = n * hw.
// Requires m > 1.
void batchnorm_forward_train(const float* x, const BatchNormShape& s, const float* gamma,
                             const float* beta, float eps, float momentum, float* running_mean,
                             float* running_var, float* mean, float* invstd, float* y);

// Eval mode: normalise with the running statistics; mean/invstd receive what was used.
void batchnorm_forward_eval(const float* x, const BatchNormShape& s, const float* gamma,
                            const float* beta, const float* running_mean, const float* running_var,
                            float eps, float* mean, float* invstd, float* y);

// Backward for either mode. batch_stats: forward used batch statistics (then the statistics
// depend on x and dx has the two extra mean terms). dx may be null; dgamma and dbeta accumulate.
void batchnorm_backward(const float* x, const float* dy, const BatchNormShape& s,
                        const float* gamma, const float* mean, const float* invstd,
                        bool batch_stats, float* dx, float* dgamma, float* dbeta);

}  // namespace wt::ops

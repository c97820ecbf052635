#include "ops/host/batchnorm.hpp"

#include <stdexcept>

#include "ops/host/host_for.hpp"
#include "ops/portable/batchnorm.hpp"

namespace wt::ops {

void batchnorm_forward_train(const float* x, const BatchNormShape& s, const float* gamma,
                             const float* beta, float eps, float momentum, float* running_mean,
                             float* running_var, float* mean, float* invstd, float* y) {
  if (s.n * s.hw < 2)
    throw std::invalid_argument("batchnorm2d in train mode needs more than one value per channel");
  host_for("wt::batchnorm_statistics", s.c,
           kern::BatchNormStatistics{x, s, eps, momentum, running_mean, running_var, mean, invstd});
  host_for("wt::batchnorm_normalise", s.n * s.c,
           kern::BatchNormNormalise{x, s, gamma, beta, mean, invstd, y});
}

void batchnorm_forward_eval(const float* x, const BatchNormShape& s, const float* gamma,
                            const float* beta, const float* running_mean, const float* running_var,
                            float eps, float* mean, float* invstd, float* y) {
  host_for("wt::batchnorm_running_statistics", s.c,
           kern::BatchNormRunningStatistics{running_mean, running_var, eps, mean, invstd});
  host_for("wt::batchnorm_normalise", s.n * s.c,
           kern::BatchNormNormalise{x, s, gamma, beta, mean, invstd, y});
}

void batchnorm_backward(const float* x, const float* dy, const BatchNormShape& s,
                        const float* gamma, const float* mean, const float* invstd,
                        bool batch_stats, float* dx, float* dgamma, float* dbeta) {
  host_for("wt::batchnorm_backward", s.c,
           kern::BatchNormBackward{x, dy, s, gamma, mean, invstd, batch_stats, dx, dgamma, dbeta});
}

}  // namespace wt::ops

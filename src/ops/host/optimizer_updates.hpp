#pragma once
// The optimizers' per-parameter updates, as Kokkos kernels over the host execution space
// (optimizers.cpp keeps the state tensors and step counts and picks the update).
#include <cstdint>

#include "ops/kernel_args.hpp"

namespace wt::ops {

// torch.optim.SGD with dampening 0:
//   d = g + wd * w
//   b = d on the first step, else b = mu * b + d      (only when mu != 0; b may be null otherwise)
//   d = nesterov ? d + mu * b : b                      (only when mu != 0)
//   w -= lr * d
// Both do nothing when `skip` is non-null and its count (ops::load_count) is nonzero.
void sgd_update(const SgdUpdate& u, int64_t n, float* w, const float* g, float* b,
                const float* skip = nullptr);

// torch.optim.AdamW (amsgrad off) at step t, with decay = 1 - lr * wd, step_size = lr / (1 -
// b1^t) and bias2_sqrt = sqrt(1 - b2^t):
//   m = b1 * m + (1 - b1) * g;  v = b2 * v + (1 - b2) * g * g
//   w = w * decay - step_size * m / (sqrt(v) / bias2_sqrt + eps)
void adamw_update(const AdamWUpdate& u, int64_t n, float* w, const float* g, float* m, float* v,
                  const float* skip = nullptr);

}  // namespace wt::ops

#include "ops/host/optimizer_updates.hpp"

#include <cmath>

#include "ops/host/host_for.hpp"

namespace wt::ops {

namespace {

template <bool kMomentum, bool kFirst, bool kNesterov>
void sgd_kernel(int64_t n, float* w, const float* g, float* b, float lr, float wd, float mu) {
  host_for("wt::sgd_update", n, [=](int64_t i) {
    float d = g[i] + wd * w[i];
    if (kMomentum) {
      const float buf = kFirst ? d : mu * b[i] + d;
      b[i] = buf;
      d = kNesterov ? d + mu * buf : buf;
    }
    w[i] = w[i] - lr * d;
  });
}

}  // namespace

void sgd_update(const SgdUpdate& u, int64_t n, float* w, const float* g, float* b,
                const float* skip) {
  if (skip && load_count(skip) != 0) return;  // read by the kernel: the host never waits for it
  const float lr = u.lr, wd = u.weight_decay, mu = u.momentum;
  if (mu == 0) return sgd_kernel<false, false, false>(n, w, g, b, lr, wd, mu);
  if (u.first && u.nesterov) return sgd_kernel<true, true, true>(n, w, g, b, lr, wd, mu);
  if (u.first) return sgd_kernel<true, true, false>(n, w, g, b, lr, wd, mu);
  if (u.nesterov) return sgd_kernel<true, false, true>(n, w, g, b, lr, wd, mu);
  sgd_kernel<true, false, false>(n, w, g, b, lr, wd, mu);
}

// Vectorises only without errno handling for sqrt (GCC: -fno-math-errno, set for this file in
// src/CMakeLists.txt); v >= 0 here, so errno would never be set anyway.
void adamw_update(const AdamWUpdate& u, int64_t n, float* w, const float* g, float* m, float* v,
                  const float* skip) {
  if (skip && load_count(skip) != 0) return;
  const AdamWUpdate k = u;
  host_for("wt::adamw_update", n, [=](int64_t i) {
    const float gi = g[i];
    const float mi = k.b1 * m[i] + k.one_minus_b1 * gi;
    const float vi = k.b2 * v[i] + k.one_minus_b2 * gi * gi;
    m[i] = mi;
    v[i] = vi;
    const float denom = std::sqrt(vi) / k.bias2_sqrt + k.eps;
    w[i] = w[i] * k.decay - k.step_size * mi / denom;
  });
}

}  // namespace wt::ops

#pragma once
// The optimizer updates, one index per parameter (portable.hpp). The skip flag (a non-finite
// gradient, decided on the device) is the launcher's: the host tests it once before the loop;
// the GPU wraps the functor in SkipUnless, which every thread tests.
#include "ops/kernel_args.hpp"
#include "ops/portable/portable.hpp"

namespace wt::kern {

template <bool kMomentum, bool kFirst, bool kNesterov>
struct SgdStep {
  float lr, wd, mu;
  float* w;
  const float* g;
  float* b;
  // Device memory holding lr and the first-step flag (ops::SgdUpdate::per_step), else nullptr:
  // a graph replays a kernel chosen at its capture, so there the flag is read, not a template.
  const float* lr_at;
  WT_HD void operator()(int64_t i) const {
    const float lr = lr_at ? lr_at[0] : this->lr;
    const bool first = lr_at ? lr_at[1] != 0.0f : kFirst;
    float d = g[i] + wd * w[i];
    if (kMomentum) {
      const float buf = first ? d : mu * b[i] + d;
      b[i] = buf;
      d = kNesterov ? d + mu * buf : buf;
    }
    w[i] = w[i] - lr * d;
  }
};

struct AdamWStep {
  ops::AdamWUpdate k;
  float* w;
  const float* g;
  float* m;
  float* v;
  WT_HD void operator()(int64_t i) const {
    const float* at = k.per_step;  // decay, step_size, bias2_sqrt
    const float decay = at ? at[0] : k.decay, step_size = at ? at[1] : k.step_size;
    const float bias2_sqrt = at ? at[2] : k.bias2_sqrt;
    const float gi = g[i];
    const float mi = k.b1 * m[i] + k.one_minus_b1 * gi;
    const float vi = k.b2 * v[i] + k.one_minus_b2 * gi * gi;
    m[i] = mi;
    v[i] = vi;
    const float denom = sqrtf(vi) / bias2_sqrt + k.eps;
    w[i] = w[i] * decay - step_size * mi / denom;
  }
};

// Calls `step` with the SgdStep variant that u selects (templated, so the loop has no branches).
template <class Launch>
void with_sgd_step(const ops::SgdUpdate& u, float* w, const float* g, float* b,
                   const Launch& launch) {
  const float lr = u.lr, wd = u.weight_decay, mu = u.momentum;
  const float* at = u.per_step;
  const bool first = u.first && !at;  // with a per-step record the kernel reads the rule from it
  if (mu == 0) return launch(SgdStep<false, false, false>{lr, wd, mu, w, g, b, at});
  if (first && u.nesterov) return launch(SgdStep<true, true, true>{lr, wd, mu, w, g, b, at});
  if (first) return launch(SgdStep<true, true, false>{lr, wd, mu, w, g, b, at});
  if (u.nesterov) return launch(SgdStep<true, false, true>{lr, wd, mu, w, g, b, at});
  launch(SgdStep<true, false, false>{lr, wd, mu, w, g, b, at});
}

}  // namespace wt::kern

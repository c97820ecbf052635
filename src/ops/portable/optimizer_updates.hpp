#pragma once
// The optimizer updates, one index per parameter (portable.hpp). The skip flag (a non-finite
// gradient, decided on the device) is the launcher's: the host tests it once before the loop;
// the GPU wraps the functor in SkipUnless, which every thread tests.
#include "ops/kernel_args.hpp"
#include "ops/portable/elementwise.hpp"
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
    float bi = kMomentum ? b[i] : 0.0f;
    w[i] = updated(w[i], g[i], bi);
    if (kMomentum) b[i] = bi;
  }
  // Four parameters through 16-byte accesses (elementwise.hpp's Float4), the same arithmetic.
  WT_HD void four(int64_t q) const {
    Float4 wq = load4(w, q), bq{};
    const Float4 gq = load4(g, q);
    if (kMomentum) bq = load4(b, q);
    for (int k = 0; k < 4; ++k) wq.v[k] = updated(wq.v[k], gq.v[k], bq.v[k]);
    store4(w, q, wq);
    if (kMomentum) store4(b, q, bq);
  }
  bool aligned() const { return aligned16(w) && aligned16(g) && (!kMomentum || aligned16(b)); }
  // The parameter after the step; buf: the momentum buffer, updated in place.
  WT_HD float updated(float wi, float gi, float& buf) const {
    const float lr = lr_at ? lr_at[0] : this->lr;
    const bool first = lr_at ? lr_at[1] != 0.0f : kFirst;
    float d = gi + wd * wi;
    if (kMomentum) {
      buf = first ? d : mu * buf + d;
      d = kNesterov ? d + mu * buf : buf;
    }
    return wi - lr * d;
  }
};

struct AdamWStep {
  ops::AdamWUpdate k;
  float* w;
  const float* g;
  float* m;
  float* v;
  WT_HD void operator()(int64_t i) const { w[i] = updated(w[i], g[i], m[i], v[i]); }
  WT_HD void four(int64_t q) const {
    Float4 wq = load4(w, q), mq = load4(m, q), vq = load4(v, q);
    const Float4 gq = load4(g, q);
    for (int j = 0; j < 4; ++j) wq.v[j] = updated(wq.v[j], gq.v[j], mq.v[j], vq.v[j]);
    store4(m, q, mq);
    store4(v, q, vq);
    store4(w, q, wq);
  }
  bool aligned() const { return aligned16(w) && aligned16(g) && aligned16(m) && aligned16(v); }
  // The parameter after the step; mi and vi, the moments, updated in place.
  WT_HD float updated(float wi, float gi, float& mi, float& vi) const {
    const float* at = k.per_step;  // decay, step_size, bias2_sqrt
    const float decay = at ? at[0] : k.decay, step_size = at ? at[1] : k.step_size;
    const float bias2_sqrt = at ? at[2] : k.bias2_sqrt;
    mi = k.b1 * mi + k.one_minus_b1 * gi;
    vi = k.b2 * vi + k.one_minus_b2 * gi * gi;
    const float denom = sqrtf(vi) / bias2_sqrt + k.eps;
    return wi * decay - step_size * mi / denom;
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

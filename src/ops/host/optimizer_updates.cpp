#include "ops/host/optimizer_updates.hpp"

#include "ops/host/host_for.hpp"
#include "ops/portable/optimizer_updates.hpp"

namespace wt::ops {

void sgd_update(const SgdUpdate& update, int64_t n, float* w, const float* g, float* b,
                const float* skip) {
  if (skip && load_count(skip) != 0) return;  // read by the kernel: the host never waits for it
  SgdUpdate u = update;  // the per-step values read once, so the loop stays vectorised
  if (u.per_step) {
    u.lr = u.per_step[0];
    u.first = u.per_step[1] != 0.0f;
  }
  u.per_step = nullptr;
  kern::with_sgd_step(u, w, g, b, [n](const auto& step) { host_for("wt::sgd_update", n, step); });
}

// Vectorises only without errno handling for sqrt (GCC: -fno-math-errno, set for this file in
// src/CMakeLists.txt); v >= 0 here, so errno would never be set anyway.
void adamw_update(const AdamWUpdate& update, int64_t n, float* w, const float* g, float* m,
                  float* v, const float* skip) {
  if (skip && load_count(skip) != 0) return;
  AdamWUpdate u = update;
  if (u.per_step) {
    u.decay = u.per_step[0];
    u.step_size = u.per_step[1];
    u.bias2_sqrt = u.per_step[2];
  }
  u.per_step = nullptr;
  host_for("wt::adamw_update", n, kern::AdamWStep{u, w, g, m, v});
}

}  // namespace wt::ops

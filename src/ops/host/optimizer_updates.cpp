#include "ops/host/optimizer_updates.hpp"

#include "ops/host/host_for.hpp"
#include "ops/portable/optimizer_updates.hpp"

namespace wt::ops {

void sgd_update(const SgdUpdate& u, int64_t n, float* w, const float* g, float* b,
                const float* skip) {
  if (skip && load_count(skip) != 0) return;  // read by the kernel: the host never waits for it
  kern::with_sgd_step(u, w, g, b, [n](const auto& step) { host_for("wt::sgd_update", n, step); });
}

// Vectorises only without errno handling for sqrt (GCC: -fno-math-errno, set for this file in
// src/CMakeLists.txt); v >= 0 here, so errno would never be set anyway.
void adamw_update(const AdamWUpdate& u, int64_t n, float* w, const float* g, float* m, float* v,
                  const float* skip) {
  if (skip && load_count(skip) != 0) return;
  host_for("wt::adamw_update", n, kern::AdamWStep{u, w, g, m, v});
}

}  // namespace wt::ops

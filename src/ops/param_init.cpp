#include "ops/param_init.hpp"

namespace wt::ops {

void uniform_fill(Rng& rng, float lo, float hi, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = rng.uniform(lo, hi);
}

void normal_fill(Rng& rng, float scale, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = scale * rng.normal();
}

}  // namespace wt::ops

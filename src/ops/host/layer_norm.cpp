#include "ops/host/layer_norm.hpp"

#include <cmath>

#include "ops/host/host_for.hpp"

namespace wt::ops {

void layer_norm_forward(const float* x, const float* w, const float* b, int64_t rows, int64_t dim,
                        double eps, float* y, float* stats) {
  host_for("wt::layer_norm_forward", rows, [=](int64_t r) {
    const float* xr = x + r * dim;
    float* yr = y + r * dim;
    // Two passes (mean, then centred variance) avoid E[x^2] - E[x]^2 cancellation.
    double sum = 0;
    for (int64_t j = 0; j < dim; ++j) sum += xr[j];
    const float mean = float(sum / double(dim));
    double var = 0;
    for (int64_t j = 0; j < dim; ++j) var += double(xr[j] - mean) * double(xr[j] - mean);
    const float rstd = float(1.0 / std::sqrt(var / double(dim) + eps));
    for (int64_t j = 0; j < dim; ++j) yr[j] = (xr[j] - mean) * rstd * w[j] + b[j];
    stats[2 * r] = mean;
    stats[2 * r + 1] = rstd;
  });
}

// Row by row in one thread: dw and db accumulate over the rows (a Kokkos version needs a column
// reduction, which the fused loop beats on one thread).
void layer_norm_backward(const float* x, const float* dy, const float* w, const float* stats,
                         int64_t rows, int64_t dim, float* dw, float* db, float* dx) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * dim;
    const float* dyr = dy + r * dim;
    const float mean = stats[2 * r], rstd = stats[2 * r + 1];
    // With xhat = (x - mean) * rstd and g = dy * w:
    // dx = rstd * (g - mean(g) - xhat * mean(g * xhat)).
    double sum_g = 0, sum_gx = 0;
    for (int64_t j = 0; j < dim; ++j) {
      const float xhat = (xr[j] - mean) * rstd;
      const float g = dyr[j] * w[j];
      dw[j] += dyr[j] * xhat;
      db[j] += dyr[j];
      sum_g += g;
      sum_gx += double(g) * xhat;
    }
    if (!dx) continue;
    const float mean_g = float(sum_g / double(dim)), mean_gx = float(sum_gx / double(dim));
    float* dxr = dx + r * dim;
    for (int64_t j = 0; j < dim; ++j) {
      const float xhat = (xr[j] - mean) * rstd;
      dxr[j] = rstd * (dyr[j] * w[j] - mean_g - xhat * mean_gx);
    }
  }
}

}  // namespace wt::ops

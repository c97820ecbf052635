#include "ops/host/layer_norm.hpp"

#include <cmath>
#include <vector>

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

namespace {

// Layer norm's backward as one pass over the rows: each row's dx needs only its own row, while
// dw and db sum over every row. The sums are a Kokkos array reduction: each thread adds its rows
// into its own 2 * dim partial (dw then db), and Kokkos joins the partials, so rows never race
// on a shared gradient. On the Serial backend this is the single fused loop it replaced.
struct LayerNormBackward {
  using value_type = float[];
  using size_type = int64_t;
  size_type value_count;  // 2 * dim
  const float* x;
  const float* dy;
  const float* w;
  const float* stats;
  int64_t dim;
  float* dx;

  KOKKOS_INLINE_FUNCTION void init(value_type sums) const {
    for (size_type j = 0; j < value_count; ++j) sums[j] = 0;
  }
  KOKKOS_INLINE_FUNCTION void join(value_type dst, const value_type src) const {
    for (size_type j = 0; j < value_count; ++j) dst[j] += src[j];
  }
  KOKKOS_INLINE_FUNCTION void operator()(int64_t r, value_type sums) const {
    const float* __restrict xr = x + r * dim;
    const float* __restrict dyr = dy + r * dim;
    float* __restrict dw = sums;
    float* __restrict db = sums + dim;
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
    if (!dx) return;
    const float mean_g = float(sum_g / double(dim)), mean_gx = float(sum_gx / double(dim));
    float* __restrict dxr = dx + r * dim;
    for (int64_t j = 0; j < dim; ++j) {
      const float xhat = (xr[j] - mean) * rstd;
      dxr[j] = rstd * (dyr[j] * w[j] - mean_g - xhat * mean_gx);
    }
  }
};

}  // namespace

void layer_norm_backward(const float* x, const float* dy, const float* w, const float* stats,
                         int64_t rows, int64_t dim, float* dw, float* db, float* dx) {
  std::vector<float> sums(size_t(2 * dim));
  const LayerNormBackward kernel{2 * dim, x, dy, w, stats, dim, dx};
  Kokkos::parallel_reduce("wt::layer_norm_backward",
                          Kokkos::RangePolicy<HostSpace, Kokkos::IndexType<int64_t>>(0, rows),
                          kernel, sums.data());
  host_for("wt::layer_norm_backward_sums", dim, [=, s = sums.data()](int64_t j) {
    dw[j] += s[j];
    db[j] += s[dim + j];
  });
}

}  // namespace wt::ops

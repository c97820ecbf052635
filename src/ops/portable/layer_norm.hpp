#pragma once
// Layer norm over the last dimension of a [rows, dim] matrix (portable.hpp). The forward and the
// input gradient take one index per row; the weight and bias gradients are a column kernel on the
// host (each column sums its rows in row order) and tree_reduce.hpp's column sums on the GPU
// (fixed chunks and trees): deterministic on both.
#include "ops/portable/portable.hpp"
#include "ops/portable/tree_reduce.hpp"

namespace wt::kern {

// y = (x - mean) * rstd * w + b, stats[r] = (mean, rstd). Two passes (mean, then centred
// variance) avoid E[x^2] - E[x]^2 cancellation.
struct LayerNormForward {
  const float* x;
  const float* w;
  const float* b;
  int64_t dim;
  double eps;
  float* y;
  float* stats;
  WT_HD void operator()(int64_t r) const {
    const float* xr = x + r * dim;
    float* yr = y + r * dim;
    double sum = 0;
    for (int64_t j = 0; j < dim; ++j) sum += xr[j];
    const float mean = float(sum / double(dim));
    double var = 0;
    for (int64_t j = 0; j < dim; ++j) var += double(xr[j] - mean) * double(xr[j] - mean);
    const float rstd = float(1.0 / sqrt(var / double(dim) + eps));
    for (int64_t j = 0; j < dim; ++j) yr[j] = (xr[j] - mean) * rstd * w[j] + b[j];
    stats[2 * r] = mean;
    stats[2 * r + 1] = rstd;
  }
};

// With xhat = (x - mean) * rstd and g = dy * w: dx = rstd * (g - mean(g) - xhat * mean(g * xhat)).
struct LayerNormInputGrad {
  const float* x;
  const float* dy;
  const float* w;
  const float* stats;
  int64_t dim;
  float* dx;
  WT_HD void operator()(int64_t r) const {
    const float* xr = x + r * dim;
    const float* dyr = dy + r * dim;
    const float mean = stats[2 * r], rstd = stats[2 * r + 1];
    double sum_g = 0, sum_gx = 0;
    for (int64_t j = 0; j < dim; ++j) {
      const float xhat = (xr[j] - mean) * rstd;
      const float g = dyr[j] * w[j];
      sum_g += g;
      sum_gx += double(g) * xhat;
    }
    const float mean_g = float(sum_g / double(dim)), mean_gx = float(sum_gx / double(dim));
    float* dxr = dx + r * dim;
    for (int64_t j = 0; j < dim; ++j) {
      const float xhat = (xr[j] - mean) * rstd;
      dxr[j] = rstd * (dyr[j] * w[j] - mean_g - xhat * mean_gx);
    }
  }
};

// (dy[r, j] * xhat[r, j], dy[r, j]): the terms of dw[j] and db[j].
struct LayerNormParamTerms {
  const float* x;
  const float* dy;
  const float* stats;
  int64_t dim;
  WT_HD Sum2f operator()(int64_t r, int64_t j) const {
    const float xhat = (x[r * dim + j] - stats[2 * r]) * stats[2 * r + 1];
    return Sum2f{dy[r * dim + j] * xhat, dy[r * dim + j]};
  }
};

// Column kernel: dw[j] += dy[r, j] * xhat[r, j], db[j] += dy[r, j].
struct LayerNormParamGrads {
  LayerNormParamTerms terms;
  float* dw;
  float* db;
  WT_HD void operator()(int64_t r, int64_t j) const {
    const Sum2f t = terms(r, j);
    dw[j] += t.a;
    db[j] += t.b;
  }
};

// The GPU's column form (tree_reduce.hpp): each column's summed terms added to dw[j] and db[j].
struct AddLayerNormParamTotals {
  float* dw;
  float* db;
  WT_HD void operator()(int64_t j, const Sum2d& total) const {
    dw[j] += static_cast<float>(total.a);
    db[j] += static_cast<float>(total.b);
  }
};

}  // namespace wt::kern

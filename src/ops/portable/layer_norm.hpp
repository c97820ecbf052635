#pragma once
// Layer norm over the last dimension of a [rows, dim] matrix (portable.hpp). The forward and the
// input gradient take one index per row on the host and a warp per row on the GPU; the weight and
// bias gradients are a column kernel on the host (each column sums its rows in row order) and
// tree_reduce.hpp's column sums on the GPU (fixed chunks and trees): deterministic on both.
#include "ops/portable/portable.hpp"
#include "ops/portable/tree_reduce.hpp"

namespace wt::kern {

// The GPU's row form (ops/cuda/cuda_rows_norm.cu): a warp a row, lane l taking columns
// l, l + kRowLanes, ..., each row sum joined over the lanes in tree_reduce.hpp's tree. The row
// kernels below take their columns as (first, Step): the host one thread a row (0, 1), the GPU
// (lane, kRowLanes); the formulas are one source, only the order of the double sums differs.

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
    const float mean = mean_of(sum<1>(r, 0));
    write<1>(r, 0, mean, rstd_of(centred_squares<1>(r, 0, mean)));
  }
  template <int Step>
  WT_HD double sum(int64_t r, int first) const {
    const float* xr = x + r * dim;
    double s = 0;
    for (int64_t j = first; j < dim; j += Step) s += xr[j];
    return s;
  }
  template <int Step>
  WT_HD double centred_squares(int64_t r, int first, float mean) const {
    const float* xr = x + r * dim;
    double var = 0;
    for (int64_t j = first; j < dim; j += Step) var += double(xr[j] - mean) * double(xr[j] - mean);
    return var;
  }
  WT_HD float mean_of(double sum) const { return float(sum / double(dim)); }
  WT_HD float rstd_of(double var) const { return float(1.0 / sqrt(var / double(dim) + eps)); }
  template <int Step>
  WT_HD void write(int64_t r, int first, float mean, float rstd) const {
    const float* xr = x + r * dim;
    float* yr = y + r * dim;
    for (int64_t j = first; j < dim; j += Step) yr[j] = (xr[j] - mean) * rstd * w[j] + b[j];
    if (first == 0) {
      stats[2 * r] = mean;
      stats[2 * r + 1] = rstd;
    }
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
  WT_HD void operator()(int64_t r) const { write<1>(r, 0, sums<1>(r, 0)); }
  // (sum g, sum g * xhat) over the row's columns first, first + Step, ...
  template <int Step>
  WT_HD Sum2d sums(int64_t r, int first) const {
    const float* xr = x + r * dim;
    const float* dyr = dy + r * dim;
    const float mean = stats[2 * r], rstd = stats[2 * r + 1];
    double sum_g = 0, sum_gx = 0;
    for (int64_t j = first; j < dim; j += Step) {
      const float xhat = (xr[j] - mean) * rstd;
      const float g = dyr[j] * w[j];
      sum_g += g;
      sum_gx += double(g) * xhat;
    }
    return Sum2d(sum_g, sum_gx);
  }
  template <int Step>
  WT_HD void write(int64_t r, int first, const Sum2d& total) const {
    const float* xr = x + r * dim;
    const float* dyr = dy + r * dim;
    const float mean = stats[2 * r], rstd = stats[2 * r + 1];
    const float mean_g = float(total.a / double(dim)), mean_gx = float(total.b / double(dim));
    float* dxr = dx + r * dim;
    for (int64_t j = first; j < dim; j += Step) {
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

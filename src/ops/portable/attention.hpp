#pragma once
// Row-wise causal softmax of one [T, T] attention score matrix, in place, and its backward; one
// index per row (portable.hpp).
#include "ops/portable/portable.hpp"

namespace wt::kern {

struct CausalSoftmax {
  float* p;
  int64_t T;
  WT_HD void operator()(int64_t r) const {  // row r of the stacked matrices: row i of its own
    const int64_t i = r % T;
    float* row = p + r * T;
    float mx = -INFINITY;
    for (int64_t j = 0; j <= i; ++j) mx = max_f(mx, row[j]);
    float sum = 0;
    for (int64_t j = 0; j <= i; ++j) {
      row[j] = expf(row[j] - mx);
      sum += row[j];
    }
    const float inv = 1.0f / sum;
    for (int64_t j = 0; j <= i; ++j) row[j] *= inv;
    for (int64_t j = i + 1; j < T; ++j) row[j] = 0.0f;
  }
};

// g = p * (g - sum_j p_j g_j), row by row
struct CausalSoftmaxBackward {
  const float* p;
  float* g;
  int64_t T;
  WT_HD void operator()(int64_t r) const {
    const int64_t i = r % T;
    const float* pr = p + r * T;
    float* gr = g + r * T;
    float dot = 0;
    for (int64_t j = 0; j <= i; ++j) dot += pr[j] * gr[j];
    for (int64_t j = 0; j <= i; ++j) gr[j] = pr[j] * (gr[j] - dot);
    for (int64_t j = i + 1; j < T; ++j) gr[j] = 0.0f;
  }
};

}  // namespace wt::kern

#include "ops/host/attention.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "ops/host/host_for.hpp"

namespace wt::ops {

void causal_softmax(float* p, int64_t T) {
  host_for("wt::causal_softmax", T, [=](int64_t i) {
    float* row = p + i * T;
    float mx = -std::numeric_limits<float>::infinity();
    for (int64_t j = 0; j <= i; ++j) mx = std::max(mx, row[j]);
    float sum = 0;
    for (int64_t j = 0; j <= i; ++j) {
      row[j] = std::exp(row[j] - mx);
      sum += row[j];
    }
    const float inv = 1.0f / sum;
    for (int64_t j = 0; j <= i; ++j) row[j] *= inv;
    for (int64_t j = i + 1; j < T; ++j) row[j] = 0.0f;
  });
}

void causal_softmax_backward(const float* p, float* g, int64_t T) {
  host_for("wt::causal_softmax_backward", T, [=](int64_t i) {
    const float* pr = p + i * T;
    float* gr = g + i * T;
    float dot = 0;
    for (int64_t j = 0; j <= i; ++j) dot += pr[j] * gr[j];
    for (int64_t j = 0; j <= i; ++j) gr[j] = pr[j] * (gr[j] - dot);
    for (int64_t j = i + 1; j < T; ++j) gr[j] = 0.0f;
  });
}

}  // namespace wt::ops

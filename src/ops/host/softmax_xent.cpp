#include "ops/host/softmax_xent.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "ops/host/host_for.hpp"

namespace wt::ops {

namespace {

// One row per kernel index: its softmax, gradient, loss and hit. The loss sum and hit count are
// a Kokkos reduction (row order on the Serial backend, so the sums are the loop's bit for bit).
struct SoftmaxXent {
  using value_type = XentStats;
  const float* logits;
  const int32_t* labels;
  int64_t k;
  float* grad;

  KOKKOS_INLINE_FUNCTION void init(value_type& v) const { v = XentStats{}; }
  KOKKOS_INLINE_FUNCTION void join(value_type& dst, const value_type& src) const {
    dst.loss_sum += src.loss_sum;
    dst.correct += src.correct;
  }
  KOKKOS_INLINE_FUNCTION void operator()(int64_t r, value_type& stats) const {
    const int32_t label = labels[r];
    const float* __restrict x = logits + r * k;
    float* __restrict g = grad + r * k;
    int64_t argmax = 0;
    for (int64_t j = 1; j < k; ++j)
      if (x[j] > x[argmax]) argmax = j;
    const float mx = x[argmax];
    float denom = 0.0f;
    for (int64_t j = 0; j < k; ++j) {
      g[j] = std::exp(x[j] - mx);
      denom += g[j];
    }
    const float inv = 1.0f / denom;
    for (int64_t j = 0; j < k; ++j) g[j] *= inv;
    g[label] -= 1.0f;
    // -log softmax = log(sum exp(x - max)) - (x_label - max)
    stats.loss_sum += std::log(static_cast<double>(denom)) - static_cast<double>(x[label] - mx);
    stats.correct += argmax == label;
  }
};

}  // namespace

XentStats softmax_xent_forward(const float* logits, const int32_t* labels, int64_t n, int64_t k,
                               float* grad) {
  // Labels first: a kernel cannot throw, and a bad label must not be read past.
  for (int64_t r = 0; r < n; ++r)
    if (labels[r] < 0 || labels[r] >= k)
      throw std::out_of_range("softmax_xent: label " + std::to_string(labels[r]) + " of sample " +
                              std::to_string(r) + " is outside [0, " + std::to_string(k) + ")");
  XentStats stats;
  Kokkos::parallel_reduce("wt::softmax_xent",
                          Kokkos::RangePolicy<HostSpace, Kokkos::IndexType<int64_t>>(0, n),
                          SoftmaxXent{logits, labels, k, grad}, stats);
  return stats;
}

}  // namespace wt::ops

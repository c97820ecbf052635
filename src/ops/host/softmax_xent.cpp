#include "ops/host/softmax_xent.hpp"

#include <stdexcept>
#include <string>

#include "ops/host/host_for.hpp"
#include "ops/portable/softmax_xent.hpp"

namespace wt::ops {

namespace {

// The portable row kernel under a Kokkos reduction (row order on the Serial backend, so the sums
// are the loop's bit for bit).
struct SoftmaxXentSum {
  using value_type = XentStats;
  kern::SoftmaxXentRow row;
  KOKKOS_INLINE_FUNCTION void init(value_type& v) const { v = XentStats{}; }
  KOKKOS_INLINE_FUNCTION void join(value_type& dst, const value_type& src) const {
    dst.loss_sum += src.loss_sum;
    dst.correct += src.correct;
  }
  KOKKOS_INLINE_FUNCTION void operator()(int64_t r, value_type& stats) const {
    const kern::XentRow result = row(r);
    stats.loss_sum += result.loss;
    stats.correct += result.hit;
  }
};

}  // namespace

void check_labels(const int32_t* labels, int64_t n, int64_t k) {
  for (int64_t r = 0; r < n; ++r)
    if (labels[r] < 0 || labels[r] >= k)
      throw std::out_of_range("softmax_xent: label " + std::to_string(labels[r]) + " of sample " +
                              std::to_string(r) + " is outside [0, " + std::to_string(k) + ")");
}

XentStats softmax_xent_forward(const float* logits, const int32_t* labels, int64_t n, int64_t k,
                               float* grad) {
  check_labels(labels, n,
               k);  // first: a kernel cannot throw, and a bad label must not be read past
  XentStats stats;
  Kokkos::parallel_reduce("wt::softmax_xent", HostRange(0, n),
                          SoftmaxXentSum{kern::SoftmaxXentRow{logits, labels, k, grad}}, stats);
  return stats;
}

}  // namespace wt::ops

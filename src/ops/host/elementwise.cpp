#include "ops/host/elementwise.hpp"

#include <algorithm>

#include "ops/host/host_for.hpp"
#include "ops/portable/elementwise.hpp"

namespace wt::ops {

void relu_forward(const float* x, float* y, int64_t n) {
  host_for("wt::relu_forward", n, kern::ReluForward{x, y});
}

void relu_backward(const float* y, const float* dy, float* dx, int64_t n) {
  host_for("wt::relu_backward", n, kern::ReluBackward{y, dy, dx});
}

void gelu_forward(const float* x, float* y, int64_t n) {
  host_for("wt::gelu_forward", n, kern::GeluForward{x, y});
}

void gelu_backward(const float* x, const float* dy, float* dx, int64_t n) {
  host_for("wt::gelu_backward", n, kern::GeluBackward{x, dy, dx});
}

void sum_arrays(const float* const* xs, int count, float* y, int64_t n) {
  if (count == 1) {
    std::copy(xs[0], xs[0] + n, y);
    return;
  }
  host_for("wt::sum_arrays", n, kern::Add{xs[0], xs[1], y});
  for (int k = 2; k < count; ++k) accumulate(xs[k], y, n);
}

void scale(const float* x, float s, float* y, int64_t n) {
  host_for("wt::scale", n, kern::Scale{x, s, y});
}

void accumulate(const float* x, float* y, int64_t n) {
  host_for("wt::accumulate", n, kern::Accumulate{x, y});
}

void scale_in_place(float s, float* y, int64_t n) {
  host_for("wt::scale_in_place", n, kern::ScaleInPlace{s, y});
}

void multiply(const float* a, const float* b, float* y, int64_t n) {
  host_for("wt::multiply", n, kern::Multiply{a, b, y});
}

void dropout_mask(float p, uint64_t seed, float* mask, int64_t n) {
  host_for("wt::dropout_mask", (n + 1) / 2, kern::dropout_mask(p, seed, mask, n));
}

void dropout_masks(const DropoutMasks& d, float* mask) {
  host_for("wt::dropout_masks", d.rows * ((d.per_row + 1) / 2), kern::dropout_masks(d, mask));
}

}  // namespace wt::ops

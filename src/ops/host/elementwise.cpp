#include "ops/host/elementwise.hpp"

#include <algorithm>
#include <cmath>

#include "ops/host/fast_math.hpp"
#include "ops/host/host_for.hpp"

namespace wt::ops {

void relu_forward(const float* __restrict x, float* __restrict y, int64_t n) {
  host_for("wt::relu_forward", n, [=](int64_t i) { y[i] = x[i] > 0.0f ? x[i] : 0.0f; });
}

void relu_backward(const float* __restrict y, const float* __restrict dy, float* __restrict dx,
                   int64_t n) {
  // dy[i] read unconditionally: the select then vectorises (as the restrict-qualified loop did).
  host_for("wt::relu_backward", n, [=](int64_t i) {
    const float g = dy[i];
    dx[i] = y[i] > 0.0f ? g : 0.0f;
  });
}

namespace {
constexpr float kInvSqrt2Pi = 0.39894228040143268f;
}  // namespace

void gelu_forward(const float* __restrict x, float* __restrict y, int64_t n) {
  host_for("wt::gelu_forward", n, [=](int64_t i) { y[i] = x[i] * normal_cdf_approx(x[i]); });
}

void gelu_backward(const float* __restrict x, const float* __restrict dy, float* __restrict dx,
                   int64_t n) {
  host_for("wt::gelu_backward", n, [=](int64_t i) {
    const float pdf = kInvSqrt2Pi * exp_approx(-0.5f * x[i] * x[i]);
    dx[i] = dy[i] * (normal_cdf_approx(x[i]) + x[i] * pdf);
  });
}

void sum_arrays(const float* const* xs, int count, float* __restrict y, int64_t n) {
  const float* __restrict a = xs[0];
  if (count == 1) {
    std::copy(a, a + n, y);
    return;
  }
  const float* __restrict b = xs[1];
  host_for("wt::sum_arrays", n, [=](int64_t i) { y[i] = a[i] + b[i]; });
  for (int k = 2; k < count; ++k) accumulate(xs[k], y, n);
}

void scale(const float* __restrict x, float s, float* __restrict y, int64_t n) {
  host_for("wt::scale", n, [=](int64_t i) { y[i] = s * x[i]; });
}

void accumulate(const float* __restrict x, float* __restrict y, int64_t n) {
  host_for("wt::accumulate", n, [=](int64_t i) { y[i] += x[i]; });
}

void scale_in_place(float s, float* y, int64_t n) {
  host_for("wt::scale_in_place", n, [=](int64_t i) { y[i] *= s; });
}

void multiply(const float* __restrict a, const float* __restrict b, float* __restrict y,
              int64_t n) {
  host_for("wt::multiply", n, [=](int64_t i) { y[i] = a[i] * b[i]; });
}

void dropout_mask(float p, uint64_t seed, float* __restrict mask, int64_t n) {
  // Drop when a uniform 32-bit draw falls below p * 2^32: P(keep) = 1 - p up to 2^-32.
  const uint32_t threshold =
      static_cast<uint32_t>(std::min(static_cast<double>(p) * 4294967296.0, 4294967295.0));
  const float keep = 1.0f / (1.0f - p);
  auto draw = [seed](uint64_t counter) {  // SplitMix64's output number `counter`
    uint64_t z = seed + counter * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  };
  for (int64_t i = 0; i < n; i += 2) {
    const uint64_t u = draw(uint64_t(i / 2) + 1);
    mask[i] = static_cast<uint32_t>(u) >= threshold ? keep : 0.0f;
    if (i + 1 < n) mask[i + 1] = static_cast<uint32_t>(u >> 32) >= threshold ? keep : 0.0f;
  }
}

}  // namespace wt::ops

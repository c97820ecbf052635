#include "exec/nonfinite_guard.hpp"

#include <cmath>
#include <cstring>

namespace wt {

int64_t count_nonfinite(const float* data, int64_t count) {
  int64_t n = 0;
  for (int64_t i = 0; i < count; ++i) n += std::isfinite(data[i]) ? 0 : 1;
  return n;
}

bool all_finite(const float* data, int64_t count) {
  // A float is NaN or Inf exactly when its exponent bits are all ones: the largest magnitude
  // bit pattern decides. An integer max reduction vectorises, unlike a float sum without
  // -ffast-math, so this costs about one read of the gradient.
  constexpr uint32_t kExponent = 0x7f800000u;
  uint32_t worst = 0;
  for (int64_t i = 0; i < count; ++i) {
    uint32_t bits;
    std::memcpy(&bits, data + i, sizeof bits);
    bits &= 0x7fffffffu;
    worst = bits > worst ? bits : worst;
  }
  return worst < kExponent;
}

NonFiniteGuard::NonFiniteGuard(const std::string& on_nonfinite) : stop_(on_nonfinite != "skip") {}

bool NonFiniteGuard::allow_step(int64_t step, int stage, const Tensor& grads) {
  if (all_finite(grads.data(), grads.numel())) return true;
  const std::string reason = "stage " + std::to_string(stage) + ": " +
                             std::to_string(count_nonfinite(grads.data(), grads.numel())) + " of " +
                             std::to_string(grads.numel()) +
                             " summed gradient values are NaN or Inf";
  if (stop_)
    throw Diverged("non-finite loss/gradient at step " + std::to_string(step + 1) + " (" + reason +
                   "); failure.on_nonfinite = \"skip\" skips such steps instead");
  if (last_skipped_step_ != step) ++skipped_steps_;
  last_skipped_step_ = step;
  last_reason_ = reason;
  return false;
}

}  // namespace wt

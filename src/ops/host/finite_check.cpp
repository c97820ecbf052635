#include "ops/host/finite_check.hpp"

#include <cmath>
#include <cstring>

#include "ops/portable/elementwise.hpp"

namespace wt {

bool all_finite(const float* data, int64_t count) {
  // A float is NaN or Inf exactly when its exponent bits are all ones, so the largest magnitude
  // bit pattern decides. An integer max reduction vectorises, unlike a float sum without
  // -ffast-math.
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

int64_t count_nonfinite(const float* data, int64_t count) {
  const kern::NonFinite nonfinite{data};  // the GPU's count, one source
  int64_t n = 0;
  for (int64_t i = 0; i < count; ++i) n += nonfinite(i);
  return n;
}

}  // namespace wt

#pragma once
// bfloat16 rounding (train.precision = "bf16"), written once for the host and the GPU
// (portable.hpp): a bf16 value is the high 16 bits of an FP32 one.
#include "ops/portable/portable.hpp"

namespace wt::kern {

// FP32 to bf16 bits, round to nearest even; a NaN stays a (quiet) NaN.
WT_HD uint16_t bf16_bits(float x) {
  uint32_t bits = static_cast<uint32_t>(float_bits(x));
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40u);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

WT_HD float bf16_value(uint16_t h) { return bits_float(static_cast<int32_t>(uint32_t(h) << 16)); }

// y[i] = bf16 bits of x[i]: a product's operand copied for bf16 kernels.
struct ToBf16 {
  const float* x;
  uint16_t* y;
  WT_HD void operator()(int64_t i) const { y[i] = bf16_bits(x[i]); }
};

// y[i] = the FP32 value of bf16 x[i] (+ y[i] when accumulating): a bf16 kernel's output widened.
struct FromBf16 {
  const uint16_t* x;
  float* y;
  bool accumulate;
  WT_HD void operator()(int64_t i) const {
    y[i] = accumulate ? y[i] + bf16_value(x[i]) : bf16_value(x[i]);
  }
};

}  // namespace wt::kern

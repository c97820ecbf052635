#pragma once
// Branch-free float exp and normal CDF that GCC/Clang vectorise inside elementwise loops (the
// libm calls do not vectorise without -ffast-math, which makes GELU ~20x slower). Portable
// (ops/portable/portable.hpp): the GPU runs the same arithmetic, so GELU agrees across devices.
#include "ops/portable/portable.hpp"

namespace wt::ops {

// Cephes expf: 2^n * e^r with |r| <= ln2/2 and a degree-6 polynomial; about 2 ulp. Inputs are
// clamped to the range where the result is a normal float.
WT_HD float exp_approx(float x) {
  x = kern::min_f(kern::max_f(x, -87.3f), 88.3f);
  // Round x*log2(e) to the nearest integer by adding 1.5 * 2^23: the integer lands in the low
  // mantissa bits. (A float->int conversion here stops GCC vectorising under -ftrapping-math.)
  const float shifted = x * 1.44269504088896341f + 12582912.0f;
  const int32_t ni = kern::float_bits(shifted) - 0x4B400000;
  const float n = shifted - 12582912.0f;
  const float r = x - n * 0.693359375f + n * 2.12194440e-4f;  // Cody-Waite ln2 split
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float er = p * r * r + r + 1.0f;
  return er * kern::bits_float((ni + 127) << 23);
}

// Phi(x) = 0.5 * (1 + erf(x / sqrt 2)), the standard normal CDF. Abramowitz & Stegun 7.1.26
// gives erfc(z) = t * poly(t) * exp(-z^2) for z >= 0 (absolute error <= 1.5e-7); using it for the
// lower tail directly keeps tiny CDF values accurate instead of computing 1 - (almost 1).
WT_HD float normal_cdf_approx(float x) {
  const float z = fabsf(x) * 0.70710678118654752f;
  const float t = 1.0f / (1.0f + 0.3275911f * z);
  float poly = 1.061405429f;
  poly = poly * t - 1.453152027f;
  poly = poly * t + 1.421413741f;
  poly = poly * t - 0.284496736f;
  poly = poly * t + 0.254829592f;
  const float half_erfc = 0.5f * t * poly * exp_approx(-z * z);
  // x < 0: half_erfc; x >= 0: 1 - half_erfc. Written with copysign rather than a branch so the
  // loop stays vectorisable under the default -ftrapping-math.
  return 0.5f + copysignf(0.5f - half_erfc, x);
}

}  // namespace wt::ops

#include <gtest/gtest.h>

#include <cmath>

#include "ops/portable/fast_math.hpp"

namespace wt::ops {
namespace {

TEST(FastMath, ExpMatchesLibmToAFewUlp) {
  double worst = 0;
  for (double x = -80.0; x <= 80.0; x += 1e-3) {
    const float xf = static_cast<float>(x);
    const double want = std::exp(static_cast<double>(xf));
    worst = std::max(worst, std::abs(exp_approx(xf) - want) / want);
  }
  EXPECT_LT(worst, 5e-7);
}

TEST(FastMath, ExpSaturatesInsteadOfOverflowing) {
  EXPECT_TRUE(std::isfinite(exp_approx(1000.0f)));
  EXPECT_GE(exp_approx(-1000.0f), 0.0f);
  EXPECT_LT(exp_approx(-1000.0f), 1e-37f);
}

TEST(FastMath, NormalCdfMatchesErfc) {
  double worst = 0;
  for (double x = -12.0; x <= 12.0; x += 1e-4) {
    const float xf = static_cast<float>(x);
    const double want = 0.5 * std::erfc(-static_cast<double>(xf) / std::sqrt(2.0));
    worst = std::max(worst, std::abs(normal_cdf_approx(xf) - want));
  }
  EXPECT_LT(worst, 3e-7);
  EXPECT_EQ(normal_cdf_approx(0.0f), 0.5f);
}

}  // namespace
}  // namespace wt::ops

#pragma once
// Helpers of the convolution path tests (test_conv2d_dnnl.cpp, test_conv2d_winograd.cpp): random
// inputs, and results compared at their own scale.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "tensor/rng.hpp"

namespace wt::testing {

inline std::vector<float> uniform(Rng& rng, int64_t n) {
  std::vector<float> v(n);
  for (float& x : v) x = rng.uniform(-1, 1);
  return v;
}

// Max |a - b| relative to the largest |b| at most `tolerance` (sums of many products: compare at
// their scale).
inline void expect_close(const std::vector<float>& a, const std::vector<float>& b,
                         const std::string& what, float tolerance) {
  ASSERT_EQ(a.size(), b.size()) << what;
  float scale = 1e-6f, worst = 0.0f;
  for (size_t i = 0; i < b.size(); ++i) {
    scale = std::max(scale, std::fabs(b[i]));
    worst = std::max(worst, std::fabs(a[i] - b[i]));
  }
  EXPECT_LE(worst / scale, tolerance) << what << ": max abs difference " << worst;
}

}  // namespace wt::testing

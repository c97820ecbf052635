#pragma once
// Device tensors for tests that compare two ways of computing the same thing bit for bit (a fused
// op against its unfused sequence, a backward in halves against the whole pass), on any device.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "tensor/tensor.hpp"

namespace wt::testing {

inline Tensor filled_tensor(CachingAllocator& memory, int64_t n, float value) {
  Tensor t = Tensor::empty({n}, memory);
  t.fill(value);
  return t;
}

// Every value of `a` the same bits as `b`'s; the failure says how many differ.
inline void expect_bitwise_equal(const Tensor& a, const Tensor& b, const char* what) {
  const std::vector<float> x = a.to_host(), y = b.to_host();
  ASSERT_EQ(x.size(), y.size()) << what;
  size_t differ = 0;
  for (size_t i = 0; i < x.size(); ++i) differ += std::memcmp(&x[i], &y[i], sizeof(float)) != 0;
  EXPECT_EQ(differ, 0u) << what << ": " << differ << " of " << x.size() << " values differ";
}

}  // namespace wt::testing

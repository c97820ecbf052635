// The GPU's four-wide element kernels (four(q): 16-byte loads and stores,
// ops/cuda/cuda_launch.cuh's cuda_for4) run here on the host as the launcher runs them, quads then
// the n % 4 tail: bit for bit the one-element form on every length's tail (0 to 3 left over), in
// place where the op is, with signed zeros and NaNs; and a view one float into an array is not
// aligned (the scalar path).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "ops/portable/elementwise.hpp"
#include "tensor/rng.hpp"

namespace wt {
namespace {

struct Arrays {
  std::vector<float> a, b, c;
  explicit Arrays(int64_t n, uint64_t seed) : a(size_t(n)), b(size_t(n)), c(size_t(n), -7.0f) {
    Rng rng(seed);
    for (int64_t i = 0; i < n; ++i) {
      a[size_t(i)] = rng.uniform(-2.0f, 2.0f);
      b[size_t(i)] = rng.uniform(-2.0f, 2.0f);
    }
    if (n > 2) a[0] = -0.0f, a[1] = NAN, b[2] = 0.0f;
  }
};

bool same_bits(const std::vector<float>& x, const std::vector<float>& y) {
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0;
}

// make(arrays) -> functor over the arrays' storage; `out` picks the array it writes.
template <class Make>
void expect_four_matches_one(const char* name, Make make, std::vector<float> Arrays::*out) {
  for (int64_t n : {1, 2, 3, 4, 5, 6, 7, 8, 1001, 1002, 1003, 1004}) {
    Arrays one(n, 99), four(n, 99);
    const auto f1 = make(one), f4 = make(four);
    for (int64_t i = 0; i < n; ++i) f1(i);
    for (int64_t q = 0; q < n / 4; ++q) f4.four(q);
    for (int64_t i = 4 * (n / 4); i < n; ++i) f4(i);
    EXPECT_TRUE(same_bits(one.*out, four.*out)) << name << ", n " << n;
  }
}

TEST(ElementwiseFour, EveryFourWideKernelIsItsOneElementForm) {
  expect_four_matches_one(
      "relu_forward",
      [](Arrays& r) {
        return kern::ReluForward{r.a.data(), r.c.data()};
      },
      &Arrays::c);
  expect_four_matches_one(
      "relu_forward in place",
      [](Arrays& r) {
        return kern::ReluForward{r.a.data(), r.a.data()};
      },
      &Arrays::a);
  expect_four_matches_one(
      "relu_backward",
      [](Arrays& r) {
        return kern::ReluBackward{r.a.data(), r.b.data(), r.c.data()};
      },
      &Arrays::c);
  expect_four_matches_one(
      "gelu_forward",
      [](Arrays& r) {
        return kern::GeluForward{r.a.data(), r.c.data()};
      },
      &Arrays::c);
  expect_four_matches_one(
      "gelu_backward",
      [](Arrays& r) {
        return kern::GeluBackward{r.a.data(), r.b.data(), r.c.data()};
      },
      &Arrays::c);
  expect_four_matches_one(
      "add",
      [](Arrays& r) {
        return kern::Add{r.a.data(), r.b.data(), r.c.data()};
      },
      &Arrays::c);
  expect_four_matches_one(
      "scale",
      [](Arrays& r) {
        return kern::Scale{r.a.data(), -0.3f, r.c.data()};
      },
      &Arrays::c);
  expect_four_matches_one(
      "accumulate",
      [](Arrays& r) {
        return kern::Accumulate{r.a.data(), r.b.data()};
      },
      &Arrays::b);
  expect_four_matches_one(
      "scale_in_place",
      [](Arrays& r) {
        return kern::ScaleInPlace{1.7f, r.b.data()};
      },
      &Arrays::b);
  expect_four_matches_one(
      "multiply",
      [](Arrays& r) {
        return kern::Multiply{r.a.data(), r.b.data(), r.c.data()};
      },
      &Arrays::c);
}

TEST(ElementwiseFour, AViewOneFloatInIsNotAligned) {
  alignas(16) float x[8] = {}, y[8] = {};
  EXPECT_TRUE((kern::ReluForward{x, y}.aligned()));
  EXPECT_FALSE((kern::ReluForward{x + 1, y}.aligned()));
  EXPECT_FALSE((kern::Add{x, x + 2, y}.aligned()));
  EXPECT_TRUE((kern::Accumulate{x + 4, y + 4}.aligned()));
}

}  // namespace
}  // namespace wt

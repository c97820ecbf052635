// maxpool2d: finite-difference gradients (inputs are fixed random, so no near-ties by chance
// change from run to run), hand-computed forward values, padding with -inf, and key validation.
#include <gtest/gtest.h>

#include "gradcheck.hpp"
#include "test_memory.hpp"
#include "util/input_error.hpp"

namespace wt::testing {
namespace {

GradCheckOptions small_eps() {
  GradCheckOptions opt;
  opt.eps = 1e-3;  // smaller than typical gaps between window entries, so argmax stays put
  return opt;
}

TEST(LayerMaxPool2d, GradientsKernel2) {
  check_layer_gradients("type = \"maxpool2d\"\nkernel = 2", {{2, 4, 6}}, 2, small_eps());
}

TEST(LayerMaxPool2d, GradientsOverlappingPadded) {
  check_layer_gradients("type = \"maxpool2d\"\nkernel = 3\nstride = 2\npadding = 1", {{2, 5, 5}}, 2,
                        small_eps());
}

Tensor run_forward(const std::string& toml, const Shape& sample, const std::vector<float>& values) {
  StandaloneLayer s = make_layer(toml, {sample});
  Tensor x = Tensor::empty(with_batch(1, sample), wt::testing::memory());
  std::copy(values.begin(), values.end(), x.data());
  Tensor out;
  Saved saved;
  s.layer->forward({&x}, out, saved, wt::testing::layer_context());
  return out;
}

TEST(LayerMaxPool2d, ForwardValues) {
  // 1x4x4 input, 2x2 windows.
  const std::vector<float> x = {1,  2,  5, 6,  //
                                3,  4,  7, 8,  //
                                -1, -2, 0, 9,  //
                                -3, -4, 1, 1};
  Tensor out = run_forward("type = \"maxpool2d\"\nkernel = 2", {1, 4, 4}, x);
  ASSERT_EQ(out.shape(), (Shape{1, 1, 2, 2}));
  EXPECT_EQ(out.data()[0], 4);
  EXPECT_EQ(out.data()[1], 8);
  EXPECT_EQ(out.data()[2], -1);
  EXPECT_EQ(out.data()[3], 9);
  // Padding is -inf, so an all-negative corner keeps its own maximum, not 0.
  const std::vector<float> neg = {-5, -6, -7, -8};
  Tensor padded = run_forward("type = \"maxpool2d\"\nkernel = 2\npadding = 1", {1, 2, 2}, neg);
  ASSERT_EQ(padded.shape(), (Shape{1, 1, 2, 2}));
  EXPECT_EQ(padded.data()[0], -5);
  EXPECT_EQ(padded.data()[1], -6);
  EXPECT_EQ(padded.data()[2], -7);
  EXPECT_EQ(padded.data()[3], -8);
}

TEST(LayerMaxPool2d, StrideDefaultsToKernelAndValidation) {
  StandaloneLayer s = make_layer("type = \"maxpool2d\"\nkernel = 3", {{4, 9, 10}});
  EXPECT_EQ(s.out_shape, (Shape{4, 3, 3}));
  EXPECT_THROW(make_layer("type = \"maxpool2d\"", {{1, 4, 4}}), InputError);
  EXPECT_THROW(make_layer("type = \"maxpool2d\"\nkernel = 2\npadding = 2", {{1, 4, 4}}),
               InputError);
  EXPECT_THROW(make_layer("type = \"maxpool2d\"\nkernel = 5", {{1, 4, 4}}), std::invalid_argument);
  EXPECT_THROW(make_layer("type = \"maxpool2d\"\nkernel = 2", {{16}}), std::invalid_argument);
}

}  // namespace
}  // namespace wt::testing

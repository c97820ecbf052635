// linear: finite-difference gradients, hand-computed forward values, and input validation.
#include <gtest/gtest.h>

#include "gradcheck.hpp"
#include "test_memory.hpp"
#include "util/input_error.hpp"

namespace wt::testing {
namespace {

TEST(LayerLinear, GradientsWithBias) {
  check_layer_gradients("type = \"linear\"\nout_features = 5", {{7}}, 3);
}

TEST(LayerLinear, GradientsWithoutBias) {
  check_layer_gradients("type = \"linear\"\nout_features = 4\nbias = false", {{6}}, 2);
}

TEST(LayerLinear, GradientsOverSequence) {
  // [T, F] -> [T, out]: the same weights applied to every token.
  check_layer_gradients("type = \"linear\"\nout_features = 3", {{4, 5}}, 2);
}

TEST(LayerLinear, SequenceShape) {
  StandaloneLayer s = make_layer("type = \"linear\"\nout_features = 3", {{4, 5}});
  EXPECT_EQ(s.out_shape, (Shape{4, 3}));
  EXPECT_DOUBLE_EQ(s.layer->flops_per_sample(), 4 * 3.0 * 2.0 * 5 * 3);
}

TEST(LayerLinear, ForwardMatchesHandComputedValues) {
  StandaloneLayer s = make_layer("type = \"linear\"\nout_features = 2", {{3}});
  ASSERT_EQ(s.params.size(), 2u);
  const float w[6] = {1, 2, 3, -1, 0, 0.5f};
  const float b[2] = {0.5f, -2};
  std::copy(w, w + 6, s.params[0].value.data());
  std::copy(b, b + 2, s.params[1].value.data());
  Tensor x = Tensor::empty({2, 3}, wt::testing::memory());
  const float xv[6] = {1, 1, 1, 2, 0, -4};
  std::copy(xv, xv + 6, x.data());
  Tensor out;
  Saved saved;
  s.layer->forward({&x}, out, saved, wt::testing::layer_context());
  ASSERT_EQ(out.shape(), (Shape{2, 2}));
  EXPECT_FLOAT_EQ(out.data()[0], 1 + 2 + 3 + 0.5f);
  EXPECT_FLOAT_EQ(out.data()[1], -1 + 0 + 0.5f - 2);
  EXPECT_FLOAT_EQ(out.data()[2], 2 - 12 + 0.5f);
  EXPECT_FLOAT_EQ(out.data()[3], -2 - 2 - 2);
}

TEST(LayerLinear, InitFollowsPyTorchBound) {
  StandaloneLayer s = make_layer("type = \"linear\"\nout_features = 50", {{16}});
  for (const Param& p : s.params) {
    float lo = 1, hi = -1;
    for (int64_t i = 0; i < p.value.numel(); ++i) {
      lo = std::min(lo, p.value.data()[i]);
      hi = std::max(hi, p.value.data()[i]);
    }
    EXPECT_GE(lo, -0.25f) << p.name;  // 1/sqrt(16)
    EXPECT_LE(hi, 0.25f) << p.name;
    EXPECT_LT(lo, -0.1f) << p.name;  // actually spread over the range, not all zero
    EXPECT_GT(hi, 0.1f) << p.name;
  }
}

TEST(LayerLinear, RejectsImageInputAndBadKeys) {
  EXPECT_THROW(make_layer("type = \"linear\"\nout_features = 2", {{3, 4, 4}}),
               std::invalid_argument);
  EXPECT_THROW(make_layer("type = \"linear\"", {{3}}), InputError);
  EXPECT_THROW(make_layer("type = \"linear\"\nout_features = 0", {{3}}), InputError);
  EXPECT_THROW(make_layer("type = \"linear\"\nout_features = 2\nbias = 1", {{3}}), InputError);
  EXPECT_THROW(make_layer("type = \"linear\"\nout_features = 2\nout_feature = 3", {{3}}),
               InputError);
}

}  // namespace
}  // namespace wt::testing

// layernorm: finite-difference gradients and normalised rows.
#include <gtest/gtest.h>

#include <cmath>

#include "gradcheck.hpp"
#include "test_memory.hpp"
#include "util/input_error.hpp"

namespace wt::testing {
namespace {

TEST(LayerLayerNorm, GradientsOverSequenceRows) {
  // Non-trivial weight and bias so their gradients and the w-scaled input gradient are exercised.
  check_layer_gradients("type = \"layernorm\"", {{3, 6}}, 2);
}

TEST(LayerLayerNorm, GradientsFlatInput) {
  check_layer_gradients("type = \"layernorm\"\neps = 1e-3", {{5}}, 4);
}

TEST(LayerLayerNorm, RowsComeOutNormalised) {
  StandaloneLayer s = make_layer("type = \"layernorm\"", {{2, 8}});
  Rng rng(3);
  Tensor x = random_tensor({3, 2, 8}, rng, 5.0f);
  for (int64_t i = 0; i < x.numel(); ++i) x.data()[i] += 7.0f;  // a large common offset
  Tensor out;
  Saved saved;
  s.layer->forward({&x}, out, saved, wt::testing::layer_context());
  for (int64_t r = 0; r < 6; ++r) {
    double mean = 0, sq = 0;
    for (int j = 0; j < 8; ++j) mean += out.data()[r * 8 + j] / 8.0;
    for (int j = 0; j < 8; ++j) sq += std::pow(out.data()[r * 8 + j] - mean, 2) / 8.0;
    EXPECT_NEAR(mean, 0.0, 1e-5) << r;
    EXPECT_NEAR(sq, 1.0, 1e-3) << r;
  }
  EXPECT_THROW(make_layer("type = \"layernorm\"\neps = 0", {{4}}), InputError);
}

}  // namespace
}  // namespace wt::testing

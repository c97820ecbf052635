#include <gtest/gtest.h>

#include "gradcheck.hpp"
#include "test_memory.hpp"
#include "util/input_error.hpp"

namespace wt::testing {
namespace {

TEST(LayerDropout, GradCheckInTrainMode) {
  // gradcheck reseeds ctx.rng for every forward, so each evaluation uses the same mask.
  check_layer_gradients("type = \"dropout\"\np = 0.3", {{4, 6}}, 5);
}

TEST(LayerDropout, EvalIsIdentity) {
  StandaloneLayer s = make_layer("type = \"dropout\"\np = 0.5", {{100}});
  Rng data_rng(1);
  Tensor x = random_tensor({4, 100}, data_rng);
  LayerContext ctx = wt::testing::layer_context();
  ctx.mode = Mode::Eval;  // no rng needed
  Tensor out;
  Saved saved;
  s.layer->forward({&x}, out, saved, ctx);
  for (int64_t i = 0; i < x.numel(); ++i) ASSERT_EQ(out.data()[i], x.data()[i]);
  Tensor dout = random_tensor({4, 100}, data_rng), dx;
  s.layer->backward({&x}, out, dout, {&dx}, saved, ctx);
  for (int64_t i = 0; i < x.numel(); ++i) ASSERT_EQ(dx.data()[i], dout.data()[i]);
}

TEST(LayerDropout, KeepsAboutOneMinusPAndScalesSurvivors) {
  const float p = 0.3f;
  StandaloneLayer s = make_layer("type = \"dropout\"\np = 0.3", {{1000}});
  Tensor x = Tensor::empty({100, 1000}, wt::testing::memory());
  x.fill(2.0f);
  Rng rng(42);
  LayerContext ctx = wt::testing::layer_context();
  ctx.rng = &rng;
  Tensor out;
  Saved saved;
  s.layer->forward({&x}, out, saved, ctx);
  int64_t kept = 0;
  for (int64_t i = 0; i < out.numel(); ++i) {
    if (out.data()[i] != 0.0f) {
      ++kept;
      ASSERT_FLOAT_EQ(out.data()[i], 2.0f / (1.0f - p));
    }
  }
  // 1e5 Bernoulli(0.7) draws: standard deviation of the fraction is 0.0014.
  EXPECT_NEAR(double(kept) / out.numel(), 1.0 - p, 0.01);

  // Backward routes gradient only through the kept entries, with the same scale.
  Tensor dout = Tensor::empty(out.shape(), wt::testing::memory()), dx;
  dout.fill(1.0f);
  s.layer->backward({&x}, out, dout, {&dx}, saved, ctx);
  for (int64_t i = 0; i < out.numel(); ++i)
    ASSERT_FLOAT_EQ(dx.data()[i], out.data()[i] == 0.0f ? 0.0f : 1.0f / (1.0f - p));
}

TEST(LayerDropout, SameRngStateGivesSameMask) {
  StandaloneLayer s = make_layer("type = \"dropout\"", {{64}});
  Tensor x = Tensor::empty({2, 64}, wt::testing::memory());
  x.fill(1.0f);
  Tensor a, b;
  Saved sa, sb;
  LayerContext ctx = wt::testing::layer_context();
  Rng r1(9), r2(9);
  ctx.rng = &r1;
  s.layer->forward({&x}, a, sa, ctx);
  ctx.rng = &r2;
  s.layer->forward({&x}, b, sb, ctx);
  for (int64_t i = 0; i < a.numel(); ++i) ASSERT_EQ(a.data()[i], b.data()[i]);
}

TEST(LayerDropout, RejectsPOutsideZeroOne) {
  EXPECT_THROW(make_layer("type = \"dropout\"\np = 1.0", {{4}}), InputError);
  EXPECT_THROW(make_layer("type = \"dropout\"\np = -0.1", {{4}}), InputError);
  EXPECT_THROW(make_layer("type = \"dropout\"\np = \"half\"", {{4}}), InputError);
}

}  // namespace
}  // namespace wt::testing

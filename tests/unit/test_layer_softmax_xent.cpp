#include <gtest/gtest.h>

#include <cmath>

#include "gradcheck.hpp"
#include "test_memory.hpp"

namespace wt::testing {
namespace {

TEST(LayerSoftmaxXent, LossAccuracyAndGradientByHand) {
  StandaloneLayer s = make_layer("type = \"softmax_xent\"", {{3}});
  EXPECT_TRUE(s.layer->is_loss());
  EXPECT_EQ(s.out_shape, (Shape{1}));
  Tensor x = Tensor::empty({2, 3}, wt::testing::memory());
  const float xs[] = {1.0f, 2.0f, 3.0f, 0.0f, 0.0f, 0.0f};
  std::copy(xs, xs + 6, x.data());
  const int32_t labels[] = {2, 1};
  LayerContext ctx = wt::testing::layer_context();
  ctx.labels = labels;
  ctx.loss_scale = 0.5f;
  double totals[2] = {0.0, 0.0};  // the step's totals: host memory is the host device's memory
  ctx.totals = totals;
  Tensor out;
  Saved saved;
  s.layer->forward({&x}, out, saved, ctx);

  const double z = std::exp(1.0) + std::exp(2.0) + std::exp(3.0);
  const double loss0 = std::log(z) - 3.0;  // -log(e^3 / z)
  const double loss1 = std::log(3.0);      // uniform over 3 classes
  ASSERT_EQ(out.numel(), 1);
  EXPECT_NEAR(totals[0], loss0 + loss1, 1e-6);
  EXPECT_NEAR(out.data()[0], 0.5 * (loss0 + loss1), 1e-6);
  // Row 0 argmax 2 == label; row 1 ties resolve to class 0 != label 1.
  EXPECT_EQ(totals[1], 1.0);

  Tensor dout = Tensor::empty({1}, wt::testing::memory());
  dout.data()[0] = 2.0f;
  Tensor dx;
  s.layer->backward({&x}, out, dout, {&dx}, saved, ctx);
  const double want[] = {std::exp(1.0) / z, std::exp(2.0) / z, std::exp(3.0) / z - 1.0,
                         1.0 / 3,           1.0 / 3 - 1.0,     1.0 / 3};
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(dx.data()[i], 2.0 * 0.5 * want[i], 1e-6) << i;
}

TEST(LayerSoftmaxXent, StableForHugeLogits) {
  StandaloneLayer s = make_layer("type = \"softmax_xent\"", {{2}});
  Tensor x = Tensor::empty({1, 2}, wt::testing::memory());
  x.data()[0] = 1000.0f;
  x.data()[1] = 0.0f;
  const int32_t labels[] = {1};
  LayerContext ctx = wt::testing::layer_context();
  ctx.labels = labels;
  Tensor out;
  Saved saved;
  s.layer->forward({&x}, out, saved, ctx);
  EXPECT_NEAR(out.data()[0], 1000.0f, 1e-3);
  EXPECT_TRUE(std::isfinite(saved.scalar));
}

TEST(LayerSoftmaxXent, GradCheck) {
  GradCheckOptions opt;
  opt.labels = {0, 4, 2, 2};
  opt.input_scale = 3.0f;
  check_layer_gradients("type = \"softmax_xent\"", {{5}}, 4, opt);
}

TEST(LayerSoftmaxXent, LabelOutOfRangeThrowsInsteadOfReadingPastTheRow) {
  StandaloneLayer s = make_layer("type = \"softmax_xent\"", {{3}});
  Tensor x = Tensor::zeros({2, 3}, wt::testing::memory());
  LayerContext ctx = wt::testing::layer_context();
  Tensor out;
  Saved saved;
  const int32_t too_big[] = {0, 3};
  ctx.labels = too_big;
  EXPECT_THROW(s.layer->forward({&x}, out, saved, ctx), std::out_of_range);
  const int32_t negative[] = {-1, 0};
  ctx.labels = negative;
  EXPECT_THROW(s.layer->forward({&x}, out, saved, ctx), std::out_of_range);
}

TEST(LayerSoftmaxXent, RejectsNonVectorLogits) {
  EXPECT_THROW(make_layer("type = \"softmax_xent\"", {{2, 5}}), std::invalid_argument);
}

}  // namespace
}  // namespace wt::testing

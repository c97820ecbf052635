#include <gtest/gtest.h>

#include <cmath>

#include "gradcheck.hpp"
#include "test_memory.hpp"

namespace wt::testing {
namespace {

// Per-channel batch mean and biased variance of x [n, c, hw], in double.
void channel_stats(const Tensor& x, int64_t c, std::vector<double>& mean,
                   std::vector<double>& var) {
  const int64_t n = x.dim(0), hw = x.numel() / (n * c);
  mean.assign(c, 0.0);
  var.assign(c, 0.0);
  for (int64_t ch = 0; ch < c; ++ch) {
    for (int64_t b = 0; b < n; ++b)
      for (int64_t i = 0; i < hw; ++i) mean[ch] += x.data()[(b * c + ch) * hw + i];
    mean[ch] /= double(n * hw);
    for (int64_t b = 0; b < n; ++b)
      for (int64_t i = 0; i < hw; ++i) {
        const double d = x.data()[(b * c + ch) * hw + i] - mean[ch];
        var[ch] += d * d;
      }
    var[ch] /= double(n * hw);
  }
}

TEST(LayerBatchNorm2d, ParamsAndBuffersInitialisedLikePyTorch) {
  StandaloneLayer s = make_layer("type = \"batchnorm2d\"", {{3, 4, 4}});
  ASSERT_EQ(s.params.size(), 2u);
  ASSERT_EQ(s.buffers.size(), 2u);
  EXPECT_EQ(s.params[0].name, "weight");
  EXPECT_EQ(s.params[1].name, "bias");
  EXPECT_EQ(s.buffers[0].name, "running_mean");
  EXPECT_EQ(s.buffers[1].name, "running_var");
  for (int c = 0; c < 3; ++c) {
    EXPECT_EQ(s.params[0].value.data()[c], 1.0f);
    EXPECT_EQ(s.params[1].value.data()[c], 0.0f);
    EXPECT_EQ(s.buffers[0].value.data()[c], 0.0f);
    EXPECT_EQ(s.buffers[1].value.data()[c], 1.0f);
  }
}

TEST(LayerBatchNorm2d, TrainOutputIsNormalisedPerChannel) {
  StandaloneLayer s = make_layer("type = \"batchnorm2d\"", {{3, 5, 5}});
  Rng rng(3);
  Tensor x = random_tensor({4, 3, 5, 5}, rng, 4.0f);
  for (int64_t i = 0; i < x.numel(); ++i) x.data()[i] += 10.0f;  // large mean on purpose
  Tensor out;
  Saved saved;
  s.layer->forward({&x}, out, saved, wt::testing::layer_context());
  std::vector<double> mean, var;
  channel_stats(out, 3, mean, var);
  for (int c = 0; c < 3; ++c) {
    EXPECT_NEAR(mean[c], 0.0, 1e-5);
    EXPECT_NEAR(var[c], 1.0, 1e-4);  // var/(var+eps) with var ~ 5
  }
}

TEST(LayerBatchNorm2d, RunningStatsFollowPyTorchUpdate) {
  const double momentum = 0.25;
  StandaloneLayer s = make_layer("type = \"batchnorm2d\"\nmomentum = 0.25", {{2, 3, 3}});
  std::vector<double> rm(2, 0.0), rv(2, 1.0);
  Rng rng(11);
  for (int step = 0; step < 3; ++step) {
    Tensor x = random_tensor({5, 2, 3, 3}, rng, 2.0f + step);
    for (int64_t i = 0; i < x.numel(); ++i) x.data()[i] += float(step) - 1.0f;
    Tensor out;
    Saved saved;
    s.layer->forward({&x}, out, saved, wt::testing::layer_context());
    std::vector<double> mean, var;
    channel_stats(x, 2, mean, var);
    const double m = 5 * 9;
    for (int c = 0; c < 2; ++c) {
      rm[c] = (1 - momentum) * rm[c] + momentum * mean[c];
      rv[c] = (1 - momentum) * rv[c] + momentum * var[c] * m / (m - 1);  // unbiased
      EXPECT_NEAR(s.buffers[0].value.data()[c], rm[c], 1e-5) << "step " << step;
      EXPECT_NEAR(s.buffers[1].value.data()[c], rv[c], 1e-5) << "step " << step;
    }
  }
}

TEST(LayerBatchNorm2d, EvalUsesRunningStatsAndLeavesThemAlone) {
  StandaloneLayer s = make_layer("type = \"batchnorm2d\"\neps = 1e-3", {{2, 2, 2}});
  const float rm[] = {0.5f, -2.0f}, rv[] = {4.0f, 0.25f}, g[] = {1.5f, -1.0f}, b[] = {0.1f, 3.0f};
  for (int c = 0; c < 2; ++c) {
    s.buffers[0].value.data()[c] = rm[c];
    s.buffers[1].value.data()[c] = rv[c];
    s.params[0].value.data()[c] = g[c];
    s.params[1].value.data()[c] = b[c];
  }
  Rng rng(5);
  Tensor x = random_tensor({3, 2, 2, 2}, rng, 3.0f);
  LayerContext ctx = wt::testing::layer_context();
  ctx.mode = Mode::Eval;
  Tensor out;
  Saved saved;
  s.layer->forward({&x}, out, saved, ctx);
  for (int64_t bi = 0; bi < 3; ++bi)
    for (int c = 0; c < 2; ++c)
      for (int i = 0; i < 4; ++i) {
        const int64_t k = (bi * 2 + c) * 4 + i;
        const double want = g[c] * (x.data()[k] - rm[c]) / std::sqrt(rv[c] + 1e-3) + b[c];
        EXPECT_NEAR(out.data()[k], want, 1e-5);
      }
  for (int c = 0; c < 2; ++c) {
    EXPECT_EQ(s.buffers[0].value.data()[c], rm[c]);
    EXPECT_EQ(s.buffers[1].value.data()[c], rv[c]);
  }
}

TEST(LayerBatchNorm2d, GradCheckTrainMode) {
  check_layer_gradients("type = \"batchnorm2d\"", {{3, 4, 5}}, 4);
}

TEST(LayerBatchNorm2d, GradCheckEvalMode) {
  GradCheckOptions opt;
  opt.mode = Mode::Eval;
  check_layer_gradients("type = \"batchnorm2d\"", {{3, 4, 5}}, 2, opt);
}

TEST(LayerBatchNorm2d, RejectsNonImageInput) {
  EXPECT_THROW(make_layer("type = \"batchnorm2d\"", {{16}}), std::invalid_argument);
}

}  // namespace
}  // namespace wt::testing

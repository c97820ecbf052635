// SGD and AdamW against updates worked out by hand (torch.optim semantics), and the learning-rate
// schedules at chosen steps.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "deck/run_config.hpp"
#include "ops/lr_schedule.hpp"
#include "ops/optimizers.hpp"
#include "test_memory.hpp"

namespace wt {
namespace {

// The deck's learning rate at a step: its [lr_schedule] with its [optimizer] lr as the peak.
double lr_at(const RunConfig& c, int64_t step, int64_t total) {
  return learning_rate(c.lr_schedule, c.optimizer.lr, step, total);
}

Tensor vec(std::vector<float> v) {
  Tensor t = Tensor::empty({static_cast<int64_t>(v.size())}, wt::testing::memory());
  for (size_t i = 0; i < v.size(); ++i) t.data()[i] = v[i];
  return t;
}

void expect_values(const Tensor& t, std::vector<double> expected, double tol = 1e-5) {
  ASSERT_EQ(t.numel(), static_cast<int64_t>(expected.size()));
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_NEAR(t.data()[i], expected[i], tol) << "element " << i;
}

RunConfig::Optimizer sgd(double momentum, double weight_decay, bool nesterov) {
  RunConfig::Optimizer c;
  c.kind = "sgd";
  c.momentum = momentum;
  c.weight_decay = weight_decay;
  c.nesterov = nesterov;
  return c;
}

TEST(Optimizers, PlainSgdHasNoState) {
  auto opt = make_optimizer(sgd(0.0, 0.0, false), wt::testing::device());
  Tensor w = vec({1, 2, -1});
  Tensor g = vec({0.5, -1, 2});
  // w -= 0.1 * g = [1 - 0.05, 2 + 0.1, -1 - 0.2]
  opt->step(0, w, g, 0.1);
  expect_values(w, {0.95, 2.1, -1.2});
  EXPECT_TRUE(opt->state(0).empty());
  EXPECT_EQ(opt->step_count(0), 1);
}

TEST(Optimizers, SgdMomentumWeightDecay) {
  // lr 0.1, momentum 0.9, weight decay 0.1, the same gradient g = [0.5, -1, 2] every step.
  auto opt = make_optimizer(sgd(0.9, 0.1, false), wt::testing::device());
  Tensor w = vec({1, 2, -1});
  Tensor g = vec({0.5, -1, 2});
  // step 1: d = g + 0.1 w = [0.6, -0.8, 1.9]; b = d (first step); w -= 0.1 b
  //         w = [0.94, 2.08, -1.19]
  opt->step(0, w, g, 0.1);
  expect_values(w, {0.94, 2.08, -1.19});
  auto state = opt->state(0);
  ASSERT_EQ(state.size(), 1u);
  EXPECT_EQ(state[0].first, "momentum");
  expect_values(*state[0].second, {0.6, -0.8, 1.9});
  // step 2: d = [0.5 + 0.094, -1 + 0.208, 2 - 0.119] = [0.594, -0.792, 1.881]
  //         b = 0.9 [0.6, -0.8, 1.9] + d = [1.134, -1.512, 3.591]
  //         w = [0.94 - 0.1134, 2.08 + 0.1512, -1.19 - 0.3591] = [0.8266, 2.2312, -1.5491]
  opt->step(0, w, g, 0.1);
  expect_values(w, {0.8266, 2.2312, -1.5491});
  // step 3: d = [0.5 + 0.08266, -1 + 0.22312, 2 - 0.15491] = [0.58266, -0.77688, 1.84509]
  //         b = 0.9 [1.134, -1.512, 3.591] + d = [1.60326, -2.13768, 5.07699]
  //         w = [0.8266 - 0.160326, 2.2312 + 0.213768, -1.5491 - 0.507699]
  opt->step(0, w, g, 0.1);
  expect_values(w, {0.666274, 2.444968, -2.056799});
  expect_values(*opt->state(0)[0].second, {1.60326, -2.13768, 5.07699});
}

TEST(Optimizers, SgdNesterov) {
  // lr 0.1, momentum 0.9, no weight decay, g = [0.5, -1, 2] every step.
  auto opt = make_optimizer(sgd(0.9, 0.0, true), wt::testing::device());
  Tensor w = vec({1, 2, -1});
  Tensor g = vec({0.5, -1, 2});
  // step 1: b = g; d = g + 0.9 b = [0.95, -1.9, 3.8]; w -= 0.1 d = [0.905, 2.19, -1.38]
  opt->step(0, w, g, 0.1);
  expect_values(w, {0.905, 2.19, -1.38});
  // step 2: b = 0.9 g + g = [0.95, -1.9, 3.8]; d = g + 0.9 b = [1.355, -2.71, 5.42]
  //         w = [0.905 - 0.1355, 2.19 + 0.271, -1.38 - 0.542] = [0.7695, 2.461, -1.922]
  opt->step(0, w, g, 0.1);
  expect_values(w, {0.7695, 2.461, -1.922});
}

TEST(Optimizers, StagesKeepSeparateState) {
  auto opt = make_optimizer(sgd(0.9, 0.0, false), wt::testing::device());
  Tensor w0 = vec({1, 1, 1}), w1 = vec({1, 1});
  Tensor g0 = vec({1, 1, 1}), g1 = vec({2, 2});
  opt->step(0, w0, g0, 0.1);
  opt->step(0, w0, g0, 0.1);
  opt->step(1, w1, g1, 0.1);  // stage 1's first step: b = g, no momentum from stage 0
  expect_values(w1, {0.8, 0.8});
  EXPECT_EQ(opt->step_count(0), 2);
  EXPECT_EQ(opt->step_count(1), 1);
  Tensor short_grads = vec({1, 1});
  EXPECT_THROW(opt->step(0, w0, short_grads, 0.1), std::invalid_argument);
}

RunConfig::Optimizer adamw() {
  RunConfig::Optimizer c;
  c.kind = "adamw";
  c.beta1 = 0.9;
  c.beta2 = 0.999;
  c.eps = 1e-8;
  c.weight_decay = 0.1;
  return c;
}

TEST(Optimizers, AdamW) {
  // lr 0.1, betas (0.9, 0.999), eps 1e-8, weight decay 0.1 -> decay factor 1 - 0.1*0.1 = 0.99.
  auto opt = make_optimizer(adamw(), wt::testing::device());
  Tensor w = vec({1, 2, -1});
  Tensor g = vec({0.5, -1, 2});
  // step 1: w = 0.99 w = [0.99, 1.98, -0.99]; m = 0.1 g = [0.05, -0.1, 0.2];
  //         v = 0.001 g^2 = [0.00025, 0.001, 0.004]; bias1 = 0.1, bias2 = 0.001
  //         step = 0.1 / 0.1 = 1; denom = sqrt(v) / sqrt(0.001) = |g| = [0.5, 1, 2]
  //         w -= 1 * m / denom = [0.1, -0.1, 0.1]  ->  [0.89, 2.08, -1.09]
  opt->step(0, w, g, 0.1);
  expect_values(w, {0.89, 2.08, -1.09});
  // step 2 (same g): w = 0.99 w = [0.8811, 2.0592, -1.0791]
  //         m = 0.9 m + 0.1 g = [0.095, -0.19, 0.38]; v = (0.999 * 0.001 + 0.001) g^2 = 0.001999
  //         g^2 bias1 = 1 - 0.81 = 0.19, bias2 = 1 - 0.998001 = 0.001999 -> denom = |g| w -= (0.1 /
  //         0.19) * 0.19 sign(g) = 0.1 sign(g)  ->  [0.7811, 2.1592, -1.1791]
  opt->step(0, w, g, 0.1);
  expect_values(w, {0.7811, 2.1592, -1.1791});
  // step 3 with g = 0: w = 0.99 w = [0.773289, 2.137608, -1.167309]
  //         m = 0.9 m = [0.0855, -0.171, 0.342]; v = 0.999 * 0.001999 g_old^2 = 0.001997001 g_old^2
  //         bias1 = 1 - 0.729 = 0.271, bias2 = 1 - 0.999^3 = 0.002997001
  //         denom = |g_old| sqrt(0.001997001 / 0.002997001) = |g_old| * 0.8162923
  //         update = (0.1 / 0.271) * 0.9 * 0.19 / 0.8162923 = 0.0773003 per element (sign of g_old)
  //         w = [0.773289 - 0.0773003, 2.137608 + 0.0773003, -1.167309 - 0.0773003]
  Tensor zero = vec({0, 0, 0});
  opt->step(0, w, zero, 0.1);
  expect_values(w, {0.6959887, 2.2149083, -1.2446093});
  auto state = opt->state(0);
  ASSERT_EQ(state.size(), 2u);
  EXPECT_EQ(state[0].first, "exp_avg");
  EXPECT_EQ(state[1].first, "exp_avg_sq");
  expect_values(*state[0].second, {0.0855, -0.171, 0.342});
  expect_values(*state[1].second, {0.00049925025, 0.001997001, 0.007988004}, 1e-9);
  EXPECT_EQ(opt->step_count(0), 3);
}

TEST(Optimizers, RestoredStateContinuesExactly) {
  // A checkpoint restore: copy the state and step count into a fresh optimizer; the next update
  // must be bit-identical to the uninterrupted one.
  for (const char* kind : {"sgd", "adamw"}) {
    RunConfig::Optimizer c = std::string(kind) == "sgd" ? sgd(0.9, 0.01, true) : adamw();
    auto original = make_optimizer(c, wt::testing::device());
    Tensor w = vec({1, 2, -1}), g1 = vec({0.5, -1, 2}), g2 = vec({-0.25, 0.75, 1});
    original->step(3, w, g1, 0.05);
    original->step(3, w, g2, 0.05);

    auto restored = make_optimizer(c, wt::testing::device());
    restored->prepare(3, 3);
    auto from = original->state(3), to = restored->state(3);
    ASSERT_EQ(from.size(), to.size()) << kind;
    for (size_t i = 0; i < from.size(); ++i) to[i].second->copy_from(*from[i].second);
    restored->set_step_count(3, original->step_count(3));

    Tensor w_restored = vec({0, 0, 0});
    w_restored.copy_from(w);
    original->step(3, w, g1, 0.05);
    restored->step(3, w_restored, g1, 0.05);
    for (int i = 0; i < 3; ++i) EXPECT_EQ(w.data()[i], w_restored.data()[i]) << kind << " " << i;
  }
}

TEST(Optimizers, UnknownKindThrows) {
  RunConfig::Optimizer c;
  c.kind = "lamb";
  EXPECT_THROW(make_optimizer(c, wt::testing::device()), std::invalid_argument);
}

RunConfig schedule(const char* kind, int64_t warmup) {
  RunConfig c;
  c.optimizer.lr = 0.1;
  c.lr_schedule.kind = kind;
  c.lr_schedule.warmup_steps = warmup;
  c.lr_schedule.step_size = 100;
  c.lr_schedule.gamma = 0.5;
  c.lr_schedule.min_lr = 0.001;
  return c;
}

TEST(LrSchedule, Constant) {
  EXPECT_DOUBLE_EQ(lr_at(schedule("constant", 0), 0, 1000), 0.1);
  EXPECT_DOUBLE_EQ(lr_at(schedule("constant", 0), 5000, 1000), 0.1);
  // warmup 10: lr * step / 10
  EXPECT_DOUBLE_EQ(lr_at(schedule("constant", 10), 0, 1000), 0.0);
  EXPECT_DOUBLE_EQ(lr_at(schedule("constant", 10), 5, 1000), 0.05);
  EXPECT_DOUBLE_EQ(lr_at(schedule("constant", 10), 10, 1000), 0.1);
}

TEST(LrSchedule, Step) {
  RunConfig c = schedule("step", 0);
  EXPECT_DOUBLE_EQ(lr_at(c, 99, 1000), 0.1);     // 0.1 * 0.5^0
  EXPECT_DOUBLE_EQ(lr_at(c, 100, 1000), 0.05);   // 0.1 * 0.5^1
  EXPECT_DOUBLE_EQ(lr_at(c, 250, 1000), 0.025);  // 0.1 * 0.5^2
  // warmup 10 at step 4: 0.1 * 0.5^0 * 4/10
  EXPECT_DOUBLE_EQ(lr_at(schedule("step", 10), 4, 1000), 0.04);
}

TEST(LrSchedule, CosineWithWarmup) {
  // warmup 10, total 110 -> 100 decay steps from 0.1 to min_lr 0.001.
  RunConfig c = schedule("cosine", 10);
  EXPECT_DOUBLE_EQ(lr_at(c, 0, 110), 0.0);
  EXPECT_DOUBLE_EQ(lr_at(c, 5, 110), 0.05);  // 0.1 * 5/10
  EXPECT_DOUBLE_EQ(lr_at(c, 10, 110), 0.1);  // progress 0: peak
  // step 35: progress 0.25 -> 0.001 + 0.099 * (1 + cos(pi/4)) / 2 = 0.001 + 0.0495 * 1.7071068
  EXPECT_NEAR(lr_at(c, 35, 110), 0.0855017857, 1e-10);
  // step 60: progress 0.5 -> 0.001 + 0.099 / 2
  EXPECT_NEAR(lr_at(c, 60, 110), 0.0505, 1e-12);
  EXPECT_NEAR(lr_at(c, 110, 110), 0.001, 1e-12);  // progress 1: floor
  EXPECT_NEAR(lr_at(c, 500, 110), 0.001, 1e-12);  // beyond the end: stays at the floor
}

}  // namespace
}  // namespace wt

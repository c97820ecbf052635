// The non-finite gradient check: the vectorised scan finds one NaN or Inf anywhere (including
// the tail a vector loop leaves), accepts the largest finite values and denormals; the device
// count is exact; the guard skips and counts steps in "skip" mode and throws Diverged naming the
// step in "stop" mode; a flagged update changes neither weights nor optimizer state nor the step
// count, on the host and the strict device.
#include <gtest/gtest.h>

#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "device/device_context.hpp"
#include "exec/nonfinite_guard.hpp"
#include "ops/host/finite_check.hpp"
#include "ops/kernel_args.hpp"
#include "ops/optimizers.hpp"
#include "solo_comm.hpp"

namespace {

using wt::DeviceContext;
using wt::DeviceKind;
using wt::Tensor;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

using wt::test::SoloComm;

Tensor tensor(DeviceContext& device, const std::vector<float>& v) {
  Tensor t = Tensor::empty({int64_t(v.size())}, device.allocator());
  t.copy_from_host(v.data());
  return t;
}

// What the executor's Step does: count into the guard's flag, then the conditional update.
void guarded_step(DeviceContext& device, wt::NonFiniteGuard& guard, wt::Optimizer& optimizer,
                  int64_t step, int key, Tensor& values, const Tensor& grads) {
  float* skip = guard.flag(step, key, grads.numel());
  device.ops().count_nonfinite_into(grads.device_ptr(), grads.numel(), skip);
  optimizer.step(key, values, grads, 0.1, 0, skip);
}

TEST(FiniteCheck, FindsOneBadValueAnywhere) {
  for (int64_t n : {1, 7, 16, 33, 1000}) {
    std::vector<float> v(size_t(n), 0.5f);
    EXPECT_TRUE(wt::all_finite(v.data(), n)) << n;
    for (float bad : {kNaN, kInf, -kInf, -kNaN}) {
      for (int64_t at : {int64_t(0), n / 2, n - 1}) {
        std::vector<float> w = v;
        w[size_t(at)] = bad;
        EXPECT_FALSE(wt::all_finite(w.data(), n)) << "n " << n << " at " << at;
        EXPECT_EQ(wt::count_nonfinite(w.data(), n), 1);
      }
    }
  }
}

TEST(FiniteCheck, AcceptsExtremeFiniteValues) {
  std::vector<float> v = {std::numeric_limits<float>::max(), -std::numeric_limits<float>::max(),
                          std::numeric_limits<float>::denorm_min(), -0.0f, 0.0f};
  EXPECT_TRUE(wt::all_finite(v.data(), int64_t(v.size())));
  EXPECT_EQ(wt::count_nonfinite(v.data(), int64_t(v.size())), 0);
}

TEST(FiniteCheck, CountIntoDeviceMemoryIsExactOnHostAndStrict) {
  for (DeviceKind kind : {DeviceKind::Host, DeviceKind::Strict}) {
    DeviceContext device(0, kind, 5);
    std::vector<float> v(1000, 0.25f);
    v[0] = kNaN;
    v[500] = -kInf;
    v[999] = kInf;
    Tensor x = tensor(device, v);
    Tensor count = Tensor::zeros({2 * wt::ops::kCountFloats}, device.allocator());
    device.ops().count_nonfinite_into(x.device_ptr(), x.numel(), count.device_ptr());
    device.ops().count_nonfinite_into(x.device_ptr(), 499, count.device_ptr() + 2);
    const std::vector<float> host = count.to_host();
    EXPECT_EQ(wt::ops::load_count(host.data()), 3.0) << wt::device_kind_name(kind);
    EXPECT_EQ(wt::ops::load_count(host.data() + 2), 1.0) << wt::device_kind_name(kind);
  }
}

TEST(NonFiniteGuard, SkipModeCountsStepsNotStages) {
  DeviceContext device;
  wt::OptimizerOptions options;
  auto optimizer = wt::make_optimizer(options, device);
  wt::NonFiniteGuard guard("skip", *optimizer, device.allocator(), 1, 2);
  SoloComm comm;
  Tensor w0 = tensor(device, std::vector<float>(8, 1.0f));
  Tensor w1 = tensor(device, std::vector<float>(8, 1.0f));
  Tensor good = tensor(device, std::vector<float>(8, 1.0f));
  std::vector<float> bad_values(8, 1.0f);
  bad_values[3] = kNaN;
  Tensor bad = tensor(device, bad_values);
  bad_values[5] = kInf;
  Tensor worse = tensor(device, bad_values);
  auto run = [&](int64_t step, const Tensor& g0, const Tensor& g1) {
    guarded_step(device, guard, *optimizer, step, 1, w1, g1);  // as gang steps: last stage first
    guarded_step(device, guard, *optimizer, step, 0, w0, g0);
    guard.end_step(step, comm);
  };
  run(0, good, good);
  EXPECT_FALSE(guard.skipped(0));
  run(1, bad, worse);  // both stages of one step
  EXPECT_TRUE(guard.skipped(1));
  EXPECT_EQ(guard.skipped_steps(), 1);
  EXPECT_NE(guard.last_reason().find("stage 0: 1 of 8 summed gradient values are NaN or Inf"),
            std::string::npos)
      << guard.last_reason();
  EXPECT_EQ(optimizer->step_count(0), 1);
  EXPECT_EQ(optimizer->step_count(1), 1);
  run(2, good, good);
  EXPECT_FALSE(guard.skipped(2));
  run(3, good, worse);
  EXPECT_EQ(guard.skipped_steps(), 2);
  EXPECT_NE(guard.last_reason().find("stage 1: 2 of 8"), std::string::npos) << guard.last_reason();
  EXPECT_EQ(optimizer->step_count(0), 3);
  EXPECT_EQ(optimizer->step_count(1), 2);
  EXPECT_THROW(guard.flag(3, 0, 8), std::logic_error) << "one Step per key and step";
}

TEST(NonFiniteGuard, StopModeThrowsDivergedNamingTheStep) {
  DeviceContext device;
  wt::OptimizerOptions options;
  auto optimizer = wt::make_optimizer(options, device);
  wt::NonFiniteGuard guard("stop", *optimizer, device.allocator(), 1, 1);
  SoloComm comm;
  Tensor w = tensor(device, {0, 0, 0, 0});
  Tensor bad = tensor(device, {-kInf, 0, 0, 0});
  guarded_step(device, guard, *optimizer, 41, 0, w, bad);
  try {
    guard.end_step(41, comm);
    FAIL() << "no Diverged";
  } catch (const wt::Diverged& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("non-finite loss/gradient at step 42 (stage 0: 1 of 4 summed gradient "
                        "values are NaN or Inf)"),
              std::string::npos)
        << what;
  }
  EXPECT_EQ(guard.skipped_steps(), 0);
}

// The vote path (NonFiniteGuard::vote, end_step with the votes summed, as the multiplexer's
// step-end arrival carries them): the same decision as the guard's own agreement, without its
// collective.
TEST(NonFiniteGuard, VotesCarriedElsewhereDecideAsItsOwnAgreementWithoutACollective) {
  DeviceContext device;
  wt::OptimizerOptions options;
  auto optimizer = wt::make_optimizer(options, device);
  // Deferred (a pipeline): stop mode agrees over the ranks.
  wt::NonFiniteGuard guard("stop", *optimizer, device.allocator(), 1, 1, /*deferred=*/true);
  SoloComm comm;
  Tensor w = tensor(device, {0, 0, 0, 0});
  Tensor good = tensor(device, {1, 2, 3, 4});
  guarded_step(device, guard, *optimizer, 0, 0, w, good);
  EXPECT_EQ(guard.vote(0), 0.0);
  guard.end_step(0, comm, 0.0);
  EXPECT_EQ(comm.double_allreduces, 0);
  // Votes < 0: none carried, the guard agrees itself.
  guarded_step(device, guard, *optimizer, 1, 0, w, good);
  guard.vote(1);
  guard.end_step(1, comm, -1.0);
  EXPECT_EQ(comm.double_allreduces, 1);
  // A step nobody voted on is a caller's bug, said at once.
  EXPECT_THROW(guard.end_step(2, comm, 0.0), std::logic_error);
  // A non-finite gradient: this rank votes 1 and every rank stops with the same message.
  Tensor bad = tensor(device, {0, kNaN, 0, 0});
  guarded_step(device, guard, *optimizer, 3, 0, w, bad);
  EXPECT_EQ(guard.vote(3), 1.0);
  try {
    guard.end_step(3, comm, 1.0);
    FAIL() << "no Diverged";
  } catch (const wt::Diverged& e) {
    EXPECT_NE(std::string(e.what()).find("at step 4 (stage 0: 1 of 4"), std::string::npos)
        << e.what();
  }
}

// A flagged update leaves the weights, the optimizer state and the step count exactly as they
// were, so the next update is bitwise the one an optimizer that never saw the bad gradient makes
// (SGD's first-step rule, AdamW's bias correction), on either device.
TEST(NonFiniteGuard, FlaggedUpdateLeavesWeightsAndOptimizerStateUntouched) {
  for (DeviceKind kind : {DeviceKind::Host, DeviceKind::Strict}) {
    for (const char* optimizer_kind : {"sgd", "adamw"}) {
      SCOPED_TRACE(std::string(wt::device_kind_name(kind)) + " " + optimizer_kind);
      DeviceContext device(0, kind, 3);
      wt::OptimizerOptions options;
      options.kind = optimizer_kind;
      options.weight_decay = 0.01;
      auto guarded = wt::make_optimizer(options, device);
      auto reference = wt::make_optimizer(options, device);
      wt::NonFiniteGuard guard("skip", *guarded, device.allocator(), 1, 1);
      SoloComm comm;
      const std::vector<float> start = {1.0f, -2.0f, 0.5f};
      Tensor w = tensor(device, start), w_ref = tensor(device, start);
      Tensor good = tensor(device, {0.5f, -1.0f, 2.0f});
      Tensor bad = tensor(device, {0.5f, kNaN, 2.0f});

      guarded_step(device, guard, *guarded, 0, 0, w, bad);  // the very first update: skipped
      guard.end_step(0, comm);
      EXPECT_TRUE(guard.skipped(0));
      EXPECT_EQ(w.to_host(), start);
      EXPECT_EQ(guarded->step_count(0), 0);
      for (auto& [name, state] : guarded->state(0))
        EXPECT_EQ(state->to_host(), std::vector<float>(3, 0.0f)) << name;

      for (int64_t step = 1; step <= 4; ++step) {
        const bool flagged = step == 3;
        const std::vector<float> before = w.to_host();
        guarded_step(device, guard, *guarded, step, 0, w, flagged ? bad : good);
        guard.end_step(step, comm);
        EXPECT_EQ(guard.skipped(step), flagged);
        if (flagged) {
          EXPECT_EQ(w.to_host(), before) << "step " << step;
          continue;
        }
        reference->step(0, w_ref, good, 0.1);
        EXPECT_EQ(w.to_host(), w_ref.to_host()) << "step " << step;
        // What a checkpoint holds: state and step count, as if the bad gradient never came.
        EXPECT_EQ(guarded->step_count(0), reference->step_count(0)) << "step " << step;
        auto state = guarded->state(0), state_ref = reference->state(0);
        ASSERT_EQ(state.size(), state_ref.size());
        for (size_t i = 0; i < state.size(); ++i)
          EXPECT_EQ(state[i].second->to_host(), state_ref[i].second->to_host()) << state[i].first;
      }
      EXPECT_EQ(guarded->step_count(0), 3);
      EXPECT_EQ(guard.skipped_steps(), 2);
    }
  }
}

}  // namespace

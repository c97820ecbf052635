// The non-finite gradient check: the vectorised scan finds one NaN or Inf anywhere (including
// the tail a vector loop leaves), accepts the largest finite values and denormals; the guard
// skips and counts steps in "skip" mode and throws Diverged naming the step in "stop" mode.
#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "exec/nonfinite_guard.hpp"
#include "ops/host/finite_check.hpp"
#include "test_memory.hpp"

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

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

TEST(NonFiniteGuard, SkipModeCountsStepsNotStages) {
  wt::NonFiniteGuard guard("skip", wt::testing::device().ops());
  wt::Tensor good = wt::Tensor::empty({8}, wt::testing::memory());
  good.fill(1.0f);
  wt::Tensor bad = wt::Tensor::empty({8}, wt::testing::memory());
  bad.fill(1.0f);
  bad.data()[3] = kNaN;
  EXPECT_TRUE(guard.allow_step(0, 0, good));
  EXPECT_FALSE(guard.skipped(0));
  EXPECT_FALSE(guard.allow_step(1, 0, bad));
  EXPECT_FALSE(guard.allow_step(1, 1, bad));  // a second stage of the same step
  EXPECT_TRUE(guard.skipped(1));
  EXPECT_EQ(guard.skipped_steps(), 1);
  EXPECT_NE(guard.last_reason().find("stage 1: 1 of 8"), std::string::npos) << guard.last_reason();
  EXPECT_TRUE(guard.allow_step(2, 0, good));
  EXPECT_FALSE(guard.skipped(2));
  EXPECT_FALSE(guard.allow_step(3, 0, bad));
  EXPECT_EQ(guard.skipped_steps(), 2);
}

TEST(NonFiniteGuard, StopModeThrowsDivergedNamingTheStep) {
  wt::NonFiniteGuard guard("stop", wt::testing::device().ops());
  wt::Tensor bad = wt::Tensor::empty({4}, wt::testing::memory());
  bad.fill(0.0f);
  bad.data()[0] = -kInf;
  try {
    guard.allow_step(41, 0, bad);
    FAIL() << "no Diverged";
  } catch (const wt::Diverged& e) {
    EXPECT_NE(std::string(e.what()).find("non-finite loss/gradient at step 42"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(guard.skipped_steps(), 0);
}

}  // namespace

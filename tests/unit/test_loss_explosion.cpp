// LossExplosionWatch (app/loss_explosion.hpp): a metrics row's loss far above its running average
// is an explosion; a loss that falls, jitters or rises slowly is not; the first row only seeds the
// average; "off" and non-finite losses (the non-finite guard's) report nothing.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "app/loss_explosion.hpp"

namespace {

TEST(LossExplosionWatch, ConvergingAndNoisyLossesAreNotExplosions) {
  wt::LossExplosionWatch watch("warn", 10);
  double loss = 2.3;
  for (int row = 1; row <= 200; ++row) {
    loss = loss * 0.97 + (row % 2 ? 0.05 : -0.05);  // falls, with jitter
    EXPECT_EQ(watch.check(row * 100, loss, 100), "") << "row " << row << " loss " << loss;
  }
  // A loss that creeps up by 3x over many rows moves the average with it.
  for (int row = 201; row <= 300; ++row) {
    loss *= 1.011;
    EXPECT_EQ(watch.check(row * 100, loss, 100), "") << "row " << row;
  }
}

TEST(LossExplosionWatch, AJumpPastTheFactorIsReportedWithItsNumbers) {
  wt::LossExplosionWatch watch("stop", 10);
  EXPECT_TRUE(watch.stops());
  EXPECT_EQ(watch.check(100, 0.5, 100), "");  // seeds
  EXPECT_EQ(watch.check(200, 0.5, 100), "");
  EXPECT_EQ(watch.check(300, 4.9, 100), "");  // 9.8x: under the factor
  // The average is now 0.9 * 0.5 + 0.1 * 4.9 = 0.94: 9.5 is 10.1 times it.
  const std::string what = watch.check(400, 9.5, 100);
  EXPECT_NE(what.find("loss exploded at step 400"), std::string::npos) << what;
  EXPECT_NE(what.find("over the last 100 steps, 9.5, is 10.1 times its running average 0.94"),
            std::string::npos)
      << what;
  EXPECT_NE(what.find("failure.explosion_factor = 10"), std::string::npos) << what;
}

TEST(LossExplosionWatch, FirstRowOffAndNonFiniteReportNothing) {
  wt::LossExplosionWatch first("warn", 2);
  EXPECT_EQ(first.check(10, 1e9, 10), "") << "the first row has no average to exceed";
  wt::LossExplosionWatch off("off", 2);
  EXPECT_FALSE(off.stops());
  off.check(10, 1.0, 10);
  EXPECT_EQ(off.check(20, 1e9, 10), "");
  wt::LossExplosionWatch watch("warn", 2);
  watch.check(10, 1.0, 10);
  EXPECT_EQ(watch.check(20, std::numeric_limits<double>::quiet_NaN(), 10), "");
  EXPECT_EQ(watch.check(30, std::numeric_limits<double>::infinity(), 10), "");
  EXPECT_NE(watch.check(40, 2.5, 10), "") << "NaN rows must not have moved the average";
}

}  // namespace

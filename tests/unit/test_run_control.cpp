// RunControl's agreement cadence (app/run_control.hpp): syncs_next() says beforehand, step by
// step, whether after_step will agree with the other ranks, so that a driver letting background
// work run past a step's end (app/background/multiplexer.cpp) never leaves a peer waiting there.
#include <gtest/gtest.h>

#include <chrono>

#include "app/run_control.hpp"
#include "deck/run_config.hpp"
#include "solo_comm.hpp"

namespace wt {
namespace {

TEST(RunControl, SyncsNextSaysWhichStepsAgree) {
  RunConfig config;
  test::SoloComm comm;
  RunControl control(config, 0, comm, std::chrono::steady_clock::now());
  int agreed = 0;
  // Steps of 10 ms: the interval grows to 25 steps (0.25 s), at most doubling per agreement.
  for (int step = 0; step < 200; ++step) {
    const bool predicted = control.syncs_next();
    const int before = comm.double_allreduces;
    control.after_step(0.01);
    const bool synced = comm.double_allreduces > before;
    EXPECT_EQ(predicted, synced) << "step " << step;
    agreed += synced;
  }
  EXPECT_GT(agreed, 5);   // it did agree, more often at first
  EXPECT_LT(agreed, 30);  // and not every step
}

}  // namespace
}  // namespace wt

// The foreground's first wait of a step (app/background/lead_wait.hpp): found only where a step
// starts idle on a receive, timed from the peers' arrival in solo steps only.
#include <gtest/gtest.h>

#include "app/background/lead_wait.hpp"

namespace wt {
namespace {

Instruction op(OpCode code, int event = -1) {
  Instruction i;
  i.op = code;
  i.event = event;
  return i;
}

RankProgram streams(std::vector<std::vector<Instruction>> s) {
  RankProgram p;
  p.streams = std::move(s);
  return p;
}

TEST(LeadWait, FoundWhereTheStepStartsWaitingForItsInput) {
  // A pipeline's later stage: its labels, its input's receive, the wait for it, then compute.
  const LeadWait later(streams({{op(OpCode::LoadBatch), op(OpCode::RecvActivation, 0),
                                 op(OpCode::Wait, 0), op(OpCode::Forward)},
                                {}}));  // an empty stream does not count
  ASSERT_TRUE(later.found());
  EXPECT_TRUE(later.is(0, 2));
  EXPECT_FALSE(later.is(0, 1));
  // The first stage computes before it waits.
  EXPECT_FALSE(
      LeadWait(streams({{op(OpCode::LoadBatch), op(OpCode::Forward), op(OpCode::SendActivation, 0),
                         op(OpCode::RecvGradient, 1), op(OpCode::Wait, 1)}}))
          .found());
  // A first wait on an allreduce, not a receive.
  EXPECT_FALSE(
      LeadWait(streams({{op(OpCode::AllReduce, 0), op(OpCode::Wait, 0), op(OpCode::Forward)}}))
          .found());
  // Two streams with work: the next compute may come on either.
  EXPECT_FALSE(LeadWait(streams({{op(OpCode::RecvActivation, 0), op(OpCode::Wait, 0)},
                                 {op(OpCode::Forward)}}))
                   .found());
}

TEST(LeadWait, TimedFromThePeersArrivalInSoloStepsOnly) {
  LeadWait lead(streams({{op(OpCode::RecvActivation, 0), op(OpCode::Wait, 0)}}));
  ASSERT_TRUE(lead.found());
  EXPECT_EQ(lead.expected_after_arrival(), -1);
  // Solo steps: the peers arrived at t, the wait ended at t + 3.6 ms, 3.5, 3.7 ms.
  const double ran[] = {3.6e-3, 3.5e-3, 3.7e-3};
  double t = 100;
  for (double r : ran) {
    lead.peers_arrived(t);
    lead.step_ended(/*solo=*/true, t + r);
    EXPECT_EQ(lead.arrival(), -1);  // spent: the next step's arrival says again
    t += 1;
  }
  EXPECT_NEAR(lead.expected_after_arrival(), 3.6e-3, 1e-12);  // the lower median
  // Steps beside background work: their ends may have waited for a tasklet; not runs (two
  // would move the lower median).
  for (double late : {50e-3, 60e-3}) {
    lead.peers_arrived(t);
    lead.step_ended(/*solo=*/false, t + late);
  }
  // An unknown arrival (a peer on another host's clock): not a run either.
  lead.peers_arrived(-1);
  lead.step_ended(/*solo=*/true, t + 60e-3);
  EXPECT_NEAR(lead.expected_after_arrival(), 3.6e-3, 1e-12);
}

}  // namespace
}  // namespace wt

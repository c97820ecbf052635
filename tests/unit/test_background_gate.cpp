// DeepPool multiplexing's decisions (app/background/): the solo times, the slowdown feedback's
// average (react at once, relax slowly), and the gate read off a real executor's state.
#include <gtest/gtest.h>

#include "app/background/background_gate.hpp"
#include "app/background/background_split.hpp"
#include "app/background/slowdown_feedback.hpp"

namespace wt {
namespace {

RankProgram one_stream(std::vector<Instruction> instructions) {
  RankProgram p;
  p.streams.push_back(std::move(instructions));
  return p;
}

Instruction op(OpCode code, int event = -1) {
  Instruction i;
  i.op = code;
  i.event = event;
  return i;
}

TEST(InstructionTimes, SoloIsTheMeanOfTheRunsAfterTheFirst) {
  const RankProgram p = one_stream({op(OpCode::Forward), op(OpCode::Backward)});
  InstructionTimes times(p);
  EXPECT_EQ(times.solo_seconds(0, 0), -1);  // never ran
  times.set_recording(true);
  const Instruction& fwd = p.streams[0][0];
  times.executed(0, fwd, 0, 5.0, 0);  // the warm-up run: left out once there are more
  EXPECT_DOUBLE_EQ(times.solo_seconds(0, 0), 5.0);
  times.executed(0, fwd, 10, 11.0, 0);
  times.executed(0, fwd, 20, 23.0, 0);
  EXPECT_DOUBLE_EQ(times.solo_seconds(0, 0), 2.0);
  times.set_recording(false);
  times.executed(0, fwd, 30, 130.0, 0);  // not recording: ignored
  EXPECT_DOUBLE_EQ(times.solo_seconds(0, 0), 2.0);
  EXPECT_EQ(times.index_of(0, p.streams[0][1]), 1u);
}

TEST(SlowdownFeedback, ReactsAtOnceAndRelaxesSlowly) {
  const RankProgram p = one_stream({op(OpCode::Wait, 0)});
  SlowdownFeedback feedback(p, {1.1, 1.0, 0.1});
  const Instruction& wait = p.streams[0][0];
  feedback.executed(0, wait, 0, 1.0, 0);  // solo: 1 s
  feedback.set_warming_up(false);
  EXPECT_FALSE(feedback.above_target(0, 0));
  feedback.executed(0, wait, 0, 2.0, 0);  // 2x: weight 1.0, the average is the run
  EXPECT_DOUBLE_EQ(feedback.average_seconds(0, 0), 2.0);
  EXPECT_TRUE(feedback.above_target(0, 0));
  int runs = 0;
  while (feedback.above_target(0, 0)) {  // back at the solo time: weight 0.1 a run
    feedback.executed(0, wait, 0, 1.0, 0);
    ++runs;
  }
  EXPECT_EQ(runs, 22);  // 1 + 0.9^n <= 1.1: n = 22 (seeds-next.md §2.5 b)
  // A run at most target x solo never raises the average at once.
  const double before = feedback.average_seconds(0, 0);
  feedback.executed(0, wait, 0, 1.1, 0);
  EXPECT_DOUBLE_EQ(feedback.average_seconds(0, 0), 0.1 * 1.1 + 0.9 * before);
}

TEST(InstructionTimes, TheLowerMedianOfAFewRuns) {
  EXPECT_EQ(lower_median({}), -1);
  EXPECT_EQ(lower_median({3.0}), 3.0);
  EXPECT_EQ(lower_median({9.0, 1.0}), 1.0);              // the lower of the two middles
  EXPECT_EQ(lower_median({5.0, 100.0, 4.0, 6.0}), 5.0);  // a stall does not move it
  EXPECT_EQ(lower_median({2.0, 2.0, 2.0, 7.0}), 2.0);    // ties
}

TEST(SlowdownFeedback, AWaitIsExpectedToTakeTheMedianOfItsRecentRunsAlone) {
  // The warm-up's runs said once what a wait takes; its length follows its peers' steps and the
  // machine's load. The multiplexer plans on the median of its last runs alone, warm-up and
  // later solo steps alike; steps beside background work do not count.
  const RankProgram p = one_stream({op(OpCode::Wait, 0)});
  SlowdownFeedback feedback(p, {1.1, 1.0, 0.1});
  const Instruction& wait = p.streams[0][0];
  EXPECT_EQ(feedback.expected_seconds(0, 0), -1);  // never ran
  feedback.executed(0, wait, 0, 9.0, 0);           // the warm-up (its first run allocates)
  feedback.executed(0, wait, 0, 5.0, 0);
  EXPECT_DOUBLE_EQ(feedback.expected_seconds(0, 0), 5.0);
  feedback.set_warming_up(false);
  feedback.set_solo_step(false);
  feedback.executed(0, wait, 0, 1.0, 0);  // beside background work: not a solo run
  feedback.executed(0, wait, 0, 1.0, 0);
  EXPECT_DOUBLE_EQ(feedback.expected_seconds(0, 0), 5.0);
  feedback.set_solo_step(true);  // the load changed: the steps alone now take 3 s
  feedback.executed(0, wait, 0, 3.0, 0);
  feedback.executed(0, wait, 0, 3.0, 0);
  EXPECT_DOUBLE_EQ(feedback.expected_seconds(0, 0), 3.0);
  EXPECT_DOUBLE_EQ(feedback.solo().solo_seconds(0, 0), 5.0);  // the feedback's baseline stays
  // A rolling window: kRecentSoloRuns later runs push the earlier ones out.
  for (size_t i = 0; i < SlowdownFeedback::kRecentSoloRuns; ++i)
    feedback.executed(0, wait, 0, 4.0, 0);
  EXPECT_DOUBLE_EQ(feedback.expected_seconds(0, 0), 4.0);
}

TEST(RunBudget, AdmitsNothingBeforeASoloStep) {
  RunBudget budget(1.1, 25);
  EXPECT_FALSE(budget.admits());
  EXPECT_EQ(budget.solo_step_seconds(), -1);
  budget.record_step(1.0, true);
  EXPECT_TRUE(budget.admits());
}

// Target 1.5 with 1 s solo steps: 0.5 s of slack a step, every figure exact in binary.
TEST(RunBudget, AStepOverTargetIsRepaidByStepsAlone) {
  RunBudget budget(1.5, 1000);
  for (int k = 0; k < 4; ++k) budget.record_step(1.0, true);
  EXPECT_DOUBLE_EQ(budget.debt_seconds(), -2.0);
  budget.record_step(5.0, false);  // the background cost the foreground 4 s: debt 1.5 s
  EXPECT_DOUBLE_EQ(budget.debt_seconds(), 1.5);
  EXPECT_FALSE(budget.admits());
  int alone = 0;
  while (!budget.admits()) {  // each step at the solo time repays 0.5 s
    budget.record_step(1.0, true);
    ++alone;
  }
  EXPECT_EQ(alone, 3);
  EXPECT_DOUBLE_EQ(budget.slowdown(), 12.0 / 8.0);  // on target over the run
}

TEST(RunBudget, CreditIsCappedSoACheapStartCannotPayForASlowEnd) {
  RunBudget budget(1.5, 1000, /*max_credit_steps=*/5);
  for (int k = 0; k < 100; ++k) budget.record_step(1.0, true);
  EXPECT_DOUBLE_EQ(budget.debt_seconds(), -2.5);  // 5 steps' slack, not 100's
  budget.record_step(4.0, false);
  EXPECT_DOUBLE_EQ(budget.debt_seconds(), 0.0);
  EXPECT_TRUE(budget.admits());  // exactly on budget
  budget.record_step(1.75, false);
  EXPECT_FALSE(budget.admits());
}

TEST(RunBudget, EverySoloEveryThStepRunsAloneAndTracksTheLoad) {
  RunBudget budget(1.1, 4);
  budget.record_step(1.0, true);
  int shared = 0;
  while (budget.admits()) {
    budget.record_step(1.0, false);  // on budget: only the solo rule stops it
    ++shared;
  }
  EXPECT_EQ(shared, 3);
  // The machine got twice as slow: the solo estimate follows the solo steps (their mean).
  budget.record_step(3.0, true);
  EXPECT_DOUBLE_EQ(budget.solo_step_seconds(), 2.0);
}

// A slow start (its solo steps 2 s) sets a loose solo estimate; steps admitted against it look
// on target step by step. When the solo steps turn fast (1 s: the estimate falls to the window's
// mean), the whole run at the new estimate is over target and the budget holds until it is not.
TEST(RunBudget, AFallingSoloEstimateCallsBackTheCreditGivenAgainstTheOldOne) {
  RunBudget budget(1.5, 1000, /*max_credit_steps=*/1000);
  for (int k = 0; k < 2; ++k) budget.record_step(2.0, true);
  for (int k = 0; k < 4; ++k) budget.record_step(3.0, false);  // 1.5 x 2 s: on target
  EXPECT_TRUE(budget.admits());
  for (int k = 0; k < 2; ++k) budget.record_step(1.0, true);  // the estimate: 1.5 s
  EXPECT_DOUBLE_EQ(budget.solo_step_seconds(), 1.5);
  // 18 s over 8 steps against 1.5 x 8 x 1.5 s = 18 s: on target exactly, so far.
  EXPECT_TRUE(budget.admits());
  budget.record_step(1.0, true);  // estimate 1.4 s: 19 s against 1.5 x 9 x 1.4 = 18.9 s
  EXPECT_FALSE(budget.admits());
}

// Several ranks agree on the next step at the end of this one, before its time is known.
TEST(RunBudget, AdmitsAfterStepForeseesTheSoloRuleAndTheFirstSoloStep) {
  RunBudget budget(1.1, 3);
  EXPECT_FALSE(budget.admits_after_step(false));  // no solo time yet
  EXPECT_TRUE(budget.admits_after_step(true));    // this one will be the first
  budget.record_step(1.0, true);
  EXPECT_TRUE(budget.admits_after_step(false));  // one step since the solo one: the next is 2
  budget.record_step(1.0, false);
  EXPECT_FALSE(budget.admits_after_step(false));  // the next is the 3rd: alone
  EXPECT_TRUE(budget.admits_after_step(true));
}

TEST(RunBudget, AStreakOfSoloStepsLongEnoughToRepayTheDebt) {
  RunBudget budget(1.5, 1000);  // a solo step of 1 s earns 0.5 s (binary-exact sums)
  budget.record_step(1.0, true);
  EXPECT_EQ(budget.solo_steps_after_step(false), 0);  // within budget: none
  budget.record_step(3.5, false);  // 2 s over 1.5 x solo, less the first step's 0.5 s credit
  EXPECT_EQ(budget.solo_steps_after_step(false), 3);
  for (int k = 0; k < 2; ++k) budget.record_step(1.0, true);
  EXPECT_EQ(budget.solo_steps_after_step(true), 1);  // 0.5 s left to repay
  budget.record_step(1.0, true);
  EXPECT_EQ(budget.solo_steps_after_step(true), 0);  // and the whole run: 7.5 s of 1.5 x 5
  budget.charge(100.0);  // a debt no streak repays at once: capped, voted on again after
  EXPECT_EQ(budget.solo_steps_after_step(true), RunBudget::kMaxSoloStreak);
}

TEST(RunBudget, AOneOffChargeIsOwedProRataOverTheRun) {
  RunBudget at_once(1.5, 1000), spread(1.5, 1000);  // a solo step of 1 s, 0.5 s of slack
  for (RunBudget* b : {&at_once, &spread}) b->record_step(1.0, true);
  at_once.charge(4.0);
  spread.charge_over_run(4.0, 16);  // 0.25 s a step
  EXPECT_FALSE(at_once.admits());   // 4 s owed now: steps alone first
  EXPECT_TRUE(spread.admits());     // nothing due yet
  for (int k = 0; k < 8; ++k) spread.record_step(1.0, false);
  EXPECT_TRUE(spread.admits());    // 2 s due of 4.5 s of slack
  spread.record_step(4.0, false);  // 2.5 s over target: 15.25 s against 15
  EXPECT_FALSE(spread.admits());
  // A step alone earns 0.5 s, less the 0.25 s falling due meanwhile: one repays the 0.25 s.
  EXPECT_EQ(spread.solo_steps_after_step(true), 1);
  // A second charge carries what was not yet due of the first into its own spread.
  spread.charge_over_run(1.0, 1);  // 2.25 s due of the first; its other 1.75 s and this one
  spread.record_step(1.0, true);   // all due now: 14 s + 5 s against 16.5 s
  EXPECT_FALSE(spread.admits());
  EXPECT_EQ(spread.solo_steps_after_step(true), 5);  // 2.5 s over, 0.5 s a step alone
}

// A pipeline's later stage still in a background node when its peers arrived begins the next
// step late, and that step, alone, ends when its peers' steps do: it looks short by the delay
// on this rank alone, and a solo estimate taken from it would call the whole run slower than it is.
TEST(RunBudget, ASoloStepBegunLateIsTimedFromItsPeersArrival) {
  RunBudget budget(1.5, 1000);
  budget.record_step(1.0, true);
  budget.record_step(0.75, true, /*late_start_s=*/0.25);
  EXPECT_DOUBLE_EQ(budget.solo_step_seconds(), 1.0);
  EXPECT_DOUBLE_EQ(budget.slowdown(), 1.75 / 2.0);  // the run's own time, as it was
  budget.record_step(1.25, false, 0.5);  // beside background work: no solo time to correct
  EXPECT_DOUBLE_EQ(budget.solo_step_seconds(), 1.0);
  EXPECT_DOUBLE_EQ(budget.debt_seconds(), -1.5);  // each step less 1.5 x 1 s: -0.5 - 0.75 - 0.25
}

TEST(RunBudget, TheSoloRuleAsksForOneStepAlone) {
  RunBudget budget(1.1, 3);
  budget.record_step(1.0, true);
  budget.record_step(1.0, false);
  EXPECT_EQ(budget.solo_steps_after_step(false), 1);  // the 3rd since the solo one
}

TEST(BackgroundSplit, TheFewestMicroBatchesThatDivideTheBatchAndFitTheTasklet) {
  // One sample's time unknown: proportional to the batch.
  const auto whole = [](double s, int64_t batch) { return LongestNode{s, 0, batch}; };
  EXPECT_EQ(microbatches_to_fit(whole(0.4e-3, 8), 0.5e-3), 1);  // fits already
  EXPECT_EQ(microbatches_to_fit(whole(1.2e-3, 8), 0.5e-3), 4);  // 3 does not divide 8
  EXPECT_EQ(microbatches_to_fit(whole(4.8e-3, 8), 0.5e-3), 8);  // 10 would: one sample at most
  EXPECT_EQ(microbatches_to_fit(whole(1.0e-3, 6), 0.5e-3), 2);
  EXPECT_EQ(microbatches_to_fit(whole(5.0e-3, 1), 0.5e-3), 1);
}

TEST(BackgroundSplit, ANodeTimedOnOneSampleAndTheBatchIsLinearInBetween) {
  const LongestNode node{1.5e-3, 0.36e-3, 8};  // lenet's conv2 backward, batch 8
  EXPECT_DOUBLE_EQ(node.at(8), 1.5e-3);
  EXPECT_DOUBLE_EQ(node.at(1), 0.36e-3);
  EXPECT_NEAR(node.at(4), 0.36e-3 + 3 * 1.14e-3 / 7, 1e-12);
  // Proportional time would put 2 samples at 0.375 ms, within a 0.5 ms tasklet; it takes
  // 0.52 ms: 8 micro-batches, not 4.
  EXPECT_EQ(microbatches_to_fit(node, 0.5e-3), 8);
  EXPECT_EQ(microbatches_to_fit(LongestNode{1.5e-3, 0, 8}, 0.5e-3), 4);
  // A probe whose one sample timed above its batch (noise) is capped at the batch's time.
  EXPECT_DOUBLE_EQ((LongestNode{1e-3, 2e-3, 8}).at(1), 1e-3);
}

TEST(BackgroundSplit, ASplitDeckIsAOneStagePipelineOfMicroBatches) {
  RunConfig deck;
  split_background_batch(deck, 1);
  EXPECT_EQ(deck.schedule.kind, "gang");
  split_background_batch(deck, 4);
  EXPECT_EQ(deck.schedule.kind, "pipeline");
  EXPECT_EQ(deck.schedule.microbatches, 4);
}

}  // namespace
}  // namespace wt

// DeepPool multiplexing's decisions (app/background/): the solo times, the slowdown feedback's
// average (react at once, relax slowly), and the gate read off a real executor's state.
#include <gtest/gtest.h>

#include "app/background/background_gate.hpp"
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

}  // namespace
}  // namespace wt

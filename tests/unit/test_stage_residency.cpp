// Which stages a rank holds, read from its instructions (sched/stage_residency.hpp), for each
// generator; and a replay of a waves program that counts the stage buffers a rank holds over the
// step, so the saving of Wavelet §3.3 "Memory" is checked as data, without running any math.
#include <gtest/gtest.h>

#include <algorithm>

#include "sched/schedule_registry.hpp"
#include "sched/stage_residency.hpp"
#include "unit/schedule_inputs.hpp"

namespace {

using wt::OpCode;
using wt::Residency;

// Every node with parameters.
wt::ScheduleInput stages(int n, int world, int microbatches = 1) {
  return wt_test::chain_of_stages(n, world, microbatches, {400, 400, 400});
}

// Stage buffers (values and grads each count one) a rank holds at worst over a step, replaying
// the executor's rule: borrowed values from their Broadcast to their flagged last read, borrowed
// grads from the first Backward to the Wait on their Reduce (the latest the reduce can complete).
int peak_buffers(const wt::Program& p, int rank, int n) {
  const wt::ResidencyPlan plan = wt::plan_residency(p, rank, n);
  std::vector<int> values(n), grads(n), reduce_event(n, -1);
  for (int s = 0; s < n; ++s) values[s] = grads[s] = plan.stages[0][s] == Residency::Held ? 1 : 0;
  auto held = [&] {
    int total = 0;
    for (int s = 0; s < n; ++s) total += values[s] + grads[s];
    return total;
  };
  int peak = held();
  const auto& stream = p.ranks[rank].streams.at(0);
  for (size_t k = 0; k < stream.size(); ++k) {
    const wt::Instruction& ins = stream[k];
    const bool borrowed = ins.stage >= 0 && plan.stages[0][ins.stage] == Residency::Borrowed;
    if (borrowed && ins.op == OpCode::Broadcast) values[ins.stage] = 1;
    if (borrowed && (ins.op == OpCode::Backward || ins.op == OpCode::Reduce)) grads[ins.stage] = 1;
    if (borrowed && ins.op == OpCode::Reduce) reduce_event[ins.stage] = ins.event;
    peak = std::max(peak, held());
    if (plan.release_values_after[0][k]) values[ins.stage] = 0;
    if (ins.op == OpCode::Wait)
      for (int s = 0; s < n; ++s)
        if (reduce_event[s] == ins.event) grads[s] = 0;
  }
  return peak;
}

}  // namespace

TEST(StageResidency, GangHoldsEveryStage) {
  const wt::Program p = wt::ScheduleRegistry::generate("gang", stages(1, 2));
  for (int r = 0; r < 2; ++r) {
    const wt::ResidencyPlan plan = wt::plan_residency(p, r, 1);
    EXPECT_EQ(plan.stages[0][0], Residency::Held);
    for (const auto& flags : plan.release_values_after)
      EXPECT_EQ(std::count(flags.begin(), flags.end(), 1), 0);
  }
}

TEST(StageResidency, PipelineHoldsOnlyItsOwnStage) {
  const int n = 3;
  const wt::Program p = wt::ScheduleRegistry::generate("pipeline", stages(n, n, 4));
  for (int r = 0; r < n; ++r) {
    const wt::ResidencyPlan plan = wt::plan_residency(p, r, n);
    for (int s = 0; s < n; ++s)
      EXPECT_EQ(plan.stages[0][s], s == r ? Residency::Held : Residency::Unused)
          << "rank " << r << " stage " << s;
  }
}

// Waves: rank i owns stage i and borrows the others; each borrowed stage's values are released
// after its one Backward (its last read in the step, the forward being earlier).
TEST(StageResidency, WavesBorrowsOtherStagesForEachCycleThatNeedsThem) {
  const int n = 4;
  const wt::Program p = wt::ScheduleRegistry::generate("waves", stages(n, n));
  for (int r = 0; r < n; ++r) {
    const wt::ResidencyPlan plan = wt::plan_residency(p, r, n);
    const auto& stream = p.ranks[r].streams.at(0);
    for (int s = 0; s < n; ++s) {
      EXPECT_EQ(plan.stages[0][s], s == r ? Residency::Held : Residency::Borrowed);
      std::vector<OpCode> releases;
      for (size_t k = 0; k < stream.size(); ++k)
        if (plan.release_values_after[0][k] && stream[k].stage == s)
          releases.push_back(stream[k].op);
      // A borrowed stage is let go after its forward and fetched again for its backward, except
      // the last stage, whose backward directly follows its forward.
      std::vector<OpCode> want;
      if (s != r && s != n - 1) want.push_back(OpCode::Forward);
      if (s != r) want.push_back(OpCode::Backward);
      EXPECT_EQ(releases, want) << "rank " << r << " stage " << s;
    }
  }
}

// A program that reads a stage before any Broadcast into it cannot borrow it: held (the
// conservative default), never released.
TEST(StageResidency, ReadBeforeBroadcastStaysHeld) {
  wt::Program p;
  p.world_size = 2;
  p.events = 1;
  p.groups.push_back({0, 1});
  wt::Instruction fwd{OpCode::Forward};
  fwd.stage = 0;
  fwd.slot = 0;
  wt::Instruction bcast{OpCode::Broadcast};
  bcast.stage = 0;
  bcast.root = 1;
  bcast.event = 0;
  p.ranks.push_back(wt::RankProgram{{{fwd, bcast}}});
  p.ranks.push_back(wt::RankProgram{{{}}});
  const wt::ResidencyPlan plan = wt::plan_residency(p, 0, 1);
  EXPECT_EQ(plan.stages[0][0], Residency::Held);
  EXPECT_EQ(plan.release_values_after[0][0], 0);
}

// The memory the rule saves, counted in stage buffers (a stage's values or its grads): whole-model
// residency holds 2N on every rank; a waves rank holds its own stage's two, the values of the
// stage it computes on and of the one prefetched, and the grads of at most two borrowed stages
// (the one in backward and the one whose reduce is in flight): 6 at most, whatever N.
TEST(StageResidency, WavesRankHoldsFewerBuffersThanTheWholeModel) {
  for (int n : {2, 3, 4, 8}) {
    const wt::Program p = wt::ScheduleRegistry::generate("waves", stages(n, n));
    for (int r = 0; r < n; ++r) {
      const int peak = peak_buffers(p, r, n);
      EXPECT_LE(peak, std::min(2 * n, 6)) << n << " ranks, rank " << r;
      EXPECT_GE(peak, std::min(2 * n, 4)) << n << " ranks, rank " << r << ": own, current, next";
    }
  }
}

// The gang generator checked as data, without running any math.
#include <gtest/gtest.h>

#include <map>

#include "sched/schedule_registry.hpp"
#include "sched/stage_residency.hpp"

namespace {

wt::ScheduleInput six_nodes(int world, int64_t bucket_bytes) {
  wt::ScheduleInput in;
  in.world_size = world;
  in.deck.bucket_bytes = bucket_bytes;
  // Node parameter bytes: 100, 0, 300, 0, 50, 0 (like conv, relu, conv, relu, fc, loss).
  in.stages.push_back(wt::StageInfo{0, 6, {100, 0, 300, 0, 50, 0}});
  return in;
}

}  // namespace

TEST(GangSchedule, EveryNodeBackwardOnceAndEveryBucketReducedOnce) {
  for (int64_t bucket : {1, 200, 1000}) {
    wt::Program p = wt::ScheduleRegistry::generate("gang", six_nodes(3, bucket));
    ASSERT_EQ(p.ranks.size(), 3u);
    for (int r = 0; r < 3; ++r) {
      std::map<int, int> backward_count, reduced;
      int loads = 0, steps = 0;
      for (const auto& ins : p.ranks[r].streams.at(0)) {
        if (ins.op == wt::OpCode::LoadBatch) {
          ++loads;
          EXPECT_EQ(ins.part, r);
          EXPECT_EQ(ins.parts, 3);
        }
        if (ins.op == wt::OpCode::Backward)
          for (int n = ins.node_begin; n < ins.node_end; ++n) backward_count[n]++;
        if (ins.op == wt::OpCode::AllReduce)
          for (int n = ins.node_begin; n < ins.node_end; ++n) reduced[n]++;
        if (ins.op == wt::OpCode::Step) ++steps;
      }
      EXPECT_EQ(loads, 1);
      EXPECT_EQ(steps, 1);
      for (int n = 0; n < 6; ++n) {
        EXPECT_EQ(backward_count[n], 1) << "node " << n << " bucket " << bucket;
        EXPECT_EQ(reduced[n], 1) << "node " << n << " bucket " << bucket;
      }
    }
  }
}

TEST(GangSchedule, BucketSizeControlsOverlap) {
  auto count_allreduce = [](int64_t bucket) {
    int n = 0;
    const wt::Program p = wt::ScheduleRegistry::generate("gang", six_nodes(2, bucket));
    for (const auto& ins : p.ranks[0].streams[0]) n += ins.op == wt::OpCode::AllReduce;
    return n;
  };
  EXPECT_EQ(count_allreduce(1 << 30), 1);  // one bucket: no overlap
  EXPECT_GT(count_allreduce(1), 1);        // small buckets: reduce while backward continues
}

TEST(GangSchedule, AllReduceStartsBeforeLaterBackward) {
  wt::Program p = wt::ScheduleRegistry::generate("gang", six_nodes(2, 1));
  const auto& s = p.ranks[0].streams[0];
  size_t first_reduce = s.size(), last_backward = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i].op == wt::OpCode::AllReduce) first_reduce = std::min(first_reduce, i);
    if (s[i].op == wt::OpCode::Backward) last_backward = i;
  }
  EXPECT_LT(first_reduce, last_backward);
}

TEST(GangSchedule, SingleRankNeedsNoCommunication) {
  wt::Program p = wt::ScheduleRegistry::generate("gang", six_nodes(1, 1));
  for (const auto& ins : p.ranks[0].streams[0]) EXPECT_NE(ins.op, wt::OpCode::AllReduce);
}

TEST(ProgramValidation, RejectsWaitWithoutCompletion) {
  wt::Program p = wt::ScheduleRegistry::generate("gang", six_nodes(1, 1));
  wt::Instruction w{wt::OpCode::Wait};
  w.event = 0;
  p.events = 1;
  p.ranks[0].streams[0].push_back(w);
  EXPECT_THROW(wt::validate_program(p, 1), std::logic_error);
}

// gang_sync = "master": every bucket reduced onto rank 0 as backward produces it, rank 0 alone
// steps and broadcasts the model before the next forward; the other ranks borrow it (no
// optimizer state) and the program is valid under MPI's and NCCL's rules.
TEST(GangSchedule, MasterSyncReducesToRankZeroWhichStepsAndBroadcasts) {
  wt::ScheduleInput in = six_nodes(3, 100);
  in.deck.gang_sync = "master";
  const wt::Program p = wt::ScheduleRegistry::generate("gang", in);
  EXPECT_NO_THROW(wt::validate_program(p, 1, wt::CommRules::Mpi));
  EXPECT_NO_THROW(wt::validate_program(p, 1, wt::CommRules::Nccl));
  for (int r = 0; r < 3; ++r) {
    const auto& s = p.ranks[size_t(r)].streams[0];
    ASSERT_EQ(s.front().op, wt::OpCode::Broadcast);
    EXPECT_EQ(s.front().root, 0);
    int reduces = 0, steps = 0, allreduces = 0;
    for (const wt::Instruction& i : s) {
      reduces += i.op == wt::OpCode::Reduce && i.root == 0 && i.node_begin >= 0;
      steps += i.op == wt::OpCode::Step;
      allreduces += i.op == wt::OpCode::AllReduce;
    }
    EXPECT_EQ(reduces, 2) << "one per bucket: [2, 6) and [0, 2) at 100 bytes";
    EXPECT_EQ(allreduces, 0);
    EXPECT_EQ(steps, r == 0 ? 1 : 0);
    EXPECT_EQ(wt::plan_residency(p, r, 1).stages[0][0],
              r == 0 ? wt::Residency::Held : wt::Residency::Borrowed);
  }
}

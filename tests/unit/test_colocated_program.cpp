// A co-located round as one program (plan/colocated_program.hpp) passes validate_program for 1 to
// 4 jobs of different sizes, on 1 and 2 ranks, at every candidate split, for every partition and
// both pairings; a pairing that runs a job's groups out of order does not. And split_bytes = 0's
// choice (plan/split_choice.hpp): the split at which the largest batch fits, which then fits and
// a little more does not.
#include <gtest/gtest.h>

#include "plan/byte_pairing.hpp"
#include "plan/colocate_plan.hpp"
#include "plan/colocated_program.hpp"
#include "plan/split_choice.hpp"
#include "sched/job_placement.hpp"
#include "sched/schedule_registry.hpp"
#include "tensor/rng.hpp"

namespace {

// A gang job of one stage of `nodes` nodes on `world` ranks, placed on stream `stream` node by
// node, as a co-located job's program is (job/job.cpp).
wt::Program placed_gang(int nodes, int world, int stream) {
  wt::ScheduleInput in;
  in.world_size = world;
  in.global_batch = 8 * world;
  in.stages.push_back(wt::StageInfo{0, nodes, std::vector<int64_t>(size_t(nodes), 400)});
  return wt::on_stream(wt::per_node(wt::ScheduleRegistry::generate("gang", in), in.stages), stream);
}

// A profile whose forward keeps random bytes per node (a workspace now and then) and whose
// backward frees them, with a transient input gradient.
wt::ProfiledJob random_job(wt::Rng& rng, int nodes) {
  wt::ProfiledJob job;
  job.resident_bytes = 1000 + int64_t(rng.below(1000));
  int64_t held = 0, peak = 0;
  for (int i = 0; i < nodes; ++i) {
    const int64_t kept = 100 + int64_t(rng.below(5000));
    job.memory.forward.push_back({kept, kept + (rng.below(4) ? 0 : int64_t(rng.below(3000)))});
    held += kept;
    peak = std::max(peak, held);
  }
  for (int i = 0; i < nodes; ++i) {
    const int64_t kept = job.memory.forward[size_t(i)].net;
    job.memory.backward.push_back({-kept, int64_t(rng.below(uint64_t(kept) + 1))});
  }
  job.peak_bytes = job.resident_bytes + peak;
  return job;
}

TEST(ColocatedProgram, ValidForEveryJobCountSplitPartitionAndPairing) {
  wt::Rng rng(7);
  const int nodes_of[] = {3, 5, 4, 6};
  int programs = 0;
  for (int world = 1; world <= 2; ++world)
    for (int k = 1; k <= 4; ++k) {
      std::vector<wt::Program> placed;
      std::vector<wt::ProfiledJob> jobs;
      std::vector<int> streams;
      for (int j = 0; j < k; ++j) {
        placed.push_back(placed_gang(nodes_of[j], world, j % 2));
        jobs.push_back(random_job(rng, nodes_of[j]));
        streams.push_back(j % 2);
      }
      for (const auto partition : {wt::Partition::Split, wt::Partition::Peak, wt::Partition::Turn})
        for (const auto pairing : {wt::Pairing::Bytes, wt::Pairing::Index})
          for (const int64_t budget : {int64_t(0), int64_t(40'000)})
            for (const int64_t split : wt::split_candidates(jobs)) {
              const wt::RoundOptions options{budget, partition, pairing};
              const wt::RoundPlan plan = wt::plan_round(jobs, options, split);
              const wt::Program p =
                  wt::colocated_program(placed, plan.groups, plan.pairing, streams);
              const std::string what = "world " + std::to_string(world) + ", " + std::to_string(k) +
                                       " jobs, split " + std::to_string(split);
              ASSERT_EQ(p.jobs, k);
              ASSERT_NO_THROW(wt::validate_program(p, 1, wt::CommRules::Mpi)) << what;
              ASSERT_NO_THROW(wt::validate_program(p, 1, wt::CommRules::Nccl)) << what;
              ++programs;
            }
    }
  EXPECT_EQ(programs, 2 * 4 * 3 * 2 * 2 * 9);
}

TEST(ColocatedProgram, AJobsGroupsOutOfOrderAreRefused) {
  wt::Rng rng(3);
  const std::vector<wt::Program> placed{placed_gang(4, 1, 0)};
  const std::vector<wt::ProfiledJob> jobs{random_job(rng, 4)};
  const wt::RoundPlan plan = wt::plan_round(jobs, {}, 1);  // every pass a group of its own
  ASSERT_EQ(plan.groups[0].size(), 8u);
  wt::ColocatePairing swapped = plan.pairing;
  EXPECT_NO_THROW(
      wt::validate_program(wt::colocated_program(placed, plan.groups, swapped, {0}), 1));
  // The job's first two groups swapped: its first forward runs before its batch is loaded.
  for (auto* stream : {&swapped.av, &swapped.dv})
    for (wt::PairSlot& slot : *stream)
      if (!slot.hole() && slot.group < 2) slot.group = 1 - slot.group;
  EXPECT_THROW(wt::validate_program(wt::colocated_program(placed, plan.groups, swapped, {0}), 1),
               std::logic_error);
}

TEST(SplitChoice, TakesTheSplitAtWhichTheLargestBatchFits) {
  wt::Rng rng(11);
  const std::vector<wt::ProfiledJob> jobs{random_job(rng, 6), random_job(rng, 5)};
  for (const auto pairing : {wt::Pairing::Bytes, wt::Pairing::Index}) {
    const wt::RoundOptions options{60'000, wt::Partition::Split, pairing};
    const wt::SplitChoice choice = wt::choose_split(jobs, options);
    EXPECT_EQ(choice.candidates, int(wt::split_candidates(jobs).size()));
    for (const int64_t split : wt::split_candidates(jobs))
      EXPECT_LE(wt::largest_batch_scale(jobs, options, split), choice.batch_scale * 1.001)
          << "split " << split;
    EXPECT_GT(choice.batch_scale, 1);  // the budget has room for more than the profiled batch
    EXPECT_LE(choice.plan.memory.peak, options.memory_limit);
    // The scale found fits, and 1% more does not.
    const int64_t split = choice.plan.split_bytes;
    EXPECT_LE(
        wt::plan_round(wt::at_batch_scale(jobs, choice.batch_scale), options, split).memory.peak,
        options.memory_limit);
    EXPECT_GT(wt::plan_round(wt::at_batch_scale(jobs, choice.batch_scale * 1.01), options, split)
                  .memory.peak,
              options.memory_limit);
  }
  // Without a budget: the smallest predicted peak.
  const wt::SplitChoice free = wt::choose_split(jobs, {});
  for (const int64_t split : wt::split_candidates(jobs))
    EXPECT_GE(wt::plan_round(jobs, {}, split).memory.peak, free.plan.memory.peak);
}

TEST(ColocatedProgram, PairingTargetLeavesTheLargestNodesRoom) {
  wt::Rng rng(5);
  std::vector<wt::ProfiledJob> jobs{random_job(rng, 4), random_job(rng, 3)};
  jobs[1].memory.backward[2].peak = 7777;  // the largest transient of any node
  EXPECT_EQ(wt::pairing_target(jobs, 100'000), 100'000 - 7777);
  EXPECT_EQ(wt::pairing_target(jobs, 0), 0);     // no budget: the one-at-a-time peak
  EXPECT_EQ(wt::pairing_target(jobs, 5000), 1);  // no room: nothing pairs
  // And the plan keeps it: a round paired by bytes never comes within that room of the budget.
  const wt::RoundPlan plan =
      wt::plan_round(jobs, {30'000, wt::Partition::Split, wt::Pairing::Bytes}, 2000);
  const wt::RoundPlan alone =
      wt::plan_round(jobs, {1, wt::Partition::Split, wt::Pairing::Bytes}, 2000);
  EXPECT_LE(plan.memory.peak, std::max<int64_t>(30'000 - 7777, alone.memory.peak));
}

}  // namespace

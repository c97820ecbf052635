// Co-located jobs in the simulator (SimOptions::job_costs, overlap_launch): two mlp jobs whose
// passes cost only their fixed 1 ms (launch_s; the device's arithmetic and bandwidth are free), in
// the round that pairs their forwards and then their backwards. Without the concurrency
// assumption the round takes what the jobs take one after another; with it each pair takes one
// group's passes, the other's fixed costs hidden beside them, and the optimizer steps still take
// the engine in turn: 7 + 7 + 2 ms against 30.
#include <gtest/gtest.h>

#include "exec/schedule_input.hpp"
#include "plan/colocate_plan.hpp"
#include "plan/colocated_program.hpp"
#include "sched/job_placement.hpp"
#include "sim/simulator.hpp"

namespace {

wt::DeviceModel launch_bound_device() {
  wt::DeviceModel d;
  d.name = "launch-bound";
  d.peak_flops = 1e30;
  d.memory_bandwidth = 1e30;
  d.launch_s = 1e-3;
  d.intra_bytes_per_s = d.inter_bytes_per_s = 1e30;
  return d;
}

TEST(ColocatedSimulation, FixedCostsOverlapAcrossStreamsOnlyUnderTheAssumption) {
  const wt::Graph graph = wt::Graph::load(WT_SOURCE_DIR "/models/mlp.toml");
  const int nodes = static_cast<int>(graph.nodes.size());
  ASSERT_EQ(nodes, 7);
  wt::ScheduleOptions schedule;
  const wt::ScheduleInput in = wt::make_schedule_input(graph, {}, schedule, 32, 1);
  std::vector<wt::Program> programs;
  std::vector<wt::ProfiledJob> profiles;
  for (int j = 0; j < 2; ++j) {
    programs.push_back(
        wt::on_stream(wt::per_node(wt::ScheduleRegistry::generate("gang", in), in.stages), j));
    wt::ProfiledJob job;
    job.memory.forward.assign(size_t(nodes), {100, 100});
    job.memory.backward.assign(size_t(nodes), {-100, 0});
    profiles.push_back(job);
  }
  // Two groups a job (forward, backward), paired by bytes with room for both: F || F, B || B.
  const wt::RoundPlan plan =
      wt::plan_round(profiles, {1'000'000, wt::Partition::Turn, wt::Pairing::Bytes}, 1);
  ASSERT_EQ(plan.pairing.pairs(), 2);
  const wt::Program together = wt::colocated_program(programs, plan.groups, plan.pairing, {0, 1});
  wt::ColocatePairing one_at_a_time;
  for (int j = 0; j < 2; ++j)
    for (int g = 0; g < 2; ++g) {
      one_at_a_time.av.push_back({j, g});
      one_at_a_time.dv.push_back({});
    }
  const wt::Program temporal = wt::colocated_program(programs, plan.groups, one_at_a_time, {0, 1});

  const wt::CostModel costs(graph, {}, launch_bound_device(), nullptr, 0);
  wt::SimOptions options;
  options.global_batch = 32;
  options.job_costs = {&costs, &costs};
  options.job_batches = {32, 16};
  // 7 passes forward and 7 backward a job, 1 ms each, and its Step (1 ms of launch): 15 ms.
  const double alone = 2 * 15e-3;
  EXPECT_NEAR(wt::simulate(temporal, costs, options).step_s, alone, 1e-9);
  EXPECT_NEAR(wt::simulate(together, costs, options).step_s, alone, 1e-9);
  EXPECT_EQ(wt::simulate(together, costs, options).samples_per_step, 48);
  options.overlap_launch = true;
  EXPECT_NEAR(wt::simulate(temporal, costs, options).step_s, alone, 1e-9);  // nothing beside it
  EXPECT_NEAR(wt::simulate(together, costs, options).step_s, 7e-3 + 7e-3 + 2e-3, 1e-9);
}

}  // namespace

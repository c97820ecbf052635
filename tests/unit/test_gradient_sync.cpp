// Gradient sync as the executor runs it (pricing/gradient_sync.hpp), against figures worked out by
// hand, and against the simulator running the gang program the same buckets come from: the
// burst planner's segment pricing and the simulator's AllReduce pricing are one function.
#include <gtest/gtest.h>

#include "deck/run_config.hpp"
#include "exec/schedule_input.hpp"
#include "pricing/gradient_sync.hpp"
#include "sched/schedule_registry.hpp"
#include "sim/simulator.hpp"

namespace {

// models/mlp.toml: flatten fc1 relu1 fc2 relu2 fc3 loss. fc1 has 200,960 parameters (803,840
// bytes), fc2 65,792 (263,168), fc3 2,570 (10,280). Backward takes 0, 4, 1, 2, 1, 1, 0 ms.
wt::LayerProfile backward_profile(const wt::Graph& g) {
  const double backward_ms[] = {0, 4, 1, 2, 1, 1, 0};
  wt::LayerProfile p;
  p.model = g.name;
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    p.nodes.push_back(g.nodes[n].name);
    p.timing.push_back({0, 0, backward_ms[n] * 1e-3, 0});
  }
  return p;
}

// 100 us per message, 1 GB/s: a ring allreduce on 2 ranks takes 200 us + 1 ns per byte.
wt::DeviceModel slow_link() {
  wt::DeviceModel d;
  d.name = "test";
  d.peak_flops = 1e12;
  d.memory_bandwidth = 1e30;  // optimizer steps free
  d.ranks_per_node = 8;
  d.intra_alpha_s = d.inter_alpha_s = 100e-6;
  d.intra_bytes_per_s = d.inter_bytes_per_s = 1e9;
  return d;
}

struct Mlp {
  wt::Graph graph = wt::Graph::load(WT_SOURCE_DIR "/models/mlp.toml");
  wt::LayerProfile profile = backward_profile(graph);
  wt::SegmentSync sync(const wt::DeviceModel& d, std::vector<int> group, int64_t bucket_bytes) {
    const wt::CostModel costs(graph, {}, d, &profile, 1);
    return wt::segment_sync(costs, 0, 0, 7, 16, group, bucket_bytes);
  }
};

TEST(SegmentSync, OneRankSumsNothing) {
  Mlp m;
  const wt::SegmentSync s = m.sync(slow_link(), {0}, 1);
  EXPECT_EQ(s.buckets, 0);
  EXPECT_NEAR(s.backward_s, 9e-3, 1e-12);
  EXPECT_EQ(s.exposed_s, 0.0);
}

TEST(SegmentSync, OneBucketIsOneLatencyChainAfterBackward) {
  Mlp m;
  const wt::SegmentSync s = m.sync(slow_link(), {0, 1}, int64_t(1) << 30);
  EXPECT_EQ(s.buckets, 1);
  // 1,077,288 bytes: 200 us + 1077.288 us, all after the 9 ms of backward.
  EXPECT_NEAR(s.link_s, 1.277288e-3, 1e-12);
  EXPECT_NEAR(s.exposed_s, 1.277288e-3, 1e-12);
}

TEST(SegmentSync, BucketsOverlapTheRestOfBackward) {
  Mlp m;
  // A bucket per parameter node, and the flatten's (no parameters, still issued): backward
  // fc3+loss 1 ms, fc2+relu2 3 ms, fc1+relu1 5 ms, flatten 0.
  //   fc3's 210.28 us run at [1, 1.21028] ms, fc2's 463.168 us at [4, 4.463168], fc1's
  //   1003.84 us at [9, 10.00384], the flatten's 200 us after it: the step ends at 10.20384 ms.
  const wt::SegmentSync s = m.sync(slow_link(), {0, 1}, 1);
  EXPECT_EQ(s.buckets, 4);
  EXPECT_NEAR(s.link_s, 1.877288e-3, 1e-12);
  EXPECT_NEAR(s.finish_s, 10.20384e-3, 1e-12);
  EXPECT_NEAR(s.exposed_s, 1.20384e-3, 1e-12);
}

TEST(SegmentSync, CommunicationOnTheComputeCoresHidesNothing) {
  Mlp m;
  wt::DeviceModel d = slow_link();
  d.comm_uses_compute = true;
  const wt::SegmentSync s = m.sync(d, {0, 1}, 1);
  EXPECT_NEAR(s.exposed_s, s.link_s, 1e-12);
  EXPECT_NEAR(s.finish_s, 9e-3 + 1.877288e-3, 1e-12);
}

TEST(SegmentSync, TheSimulatorRunsTheGangProgramInTheSameTime) {
  // Gang on 2 ranks is one segment: forward (free here), backward in the same buckets with their
  // allreduces, then the free optimizer step. The simulator must end where segment_sync does.
  for (const int64_t bucket_bytes : {int64_t(1), int64_t(300000), int64_t(1) << 30}) {
    Mlp m;
    wt::RunConfig config;
    config.schedule.bucket_bytes = bucket_bytes;
    const wt::ScheduleInput in = wt::make_schedule_input(m.graph, {}, config.schedule, 32, 2);
    const wt::Program p = wt::ScheduleRegistry::generate("gang", in);
    const wt::CostModel costs(m.graph, {}, slow_link(), &m.profile, 1);
    wt::SimOptions o;
    o.global_batch = 32;
    const double simulated = wt::simulate(p, costs, o).step_s;
    const double planned = m.sync(slow_link(), {0, 1}, bucket_bytes).finish_s;
    EXPECT_NEAR(simulated, planned + costs.step_s(0), 1e-9) << bucket_bytes;
  }
}

}  // namespace

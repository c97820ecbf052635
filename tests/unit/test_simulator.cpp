// The simulator checked against step times that follow by hand from the schedules' shapes, with
// layer times given by a synthetic profile and links made free or costly on purpose.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <functional>

#include "deck/run_config.hpp"
#include "exec/schedule_input.hpp"
#include "sched/job_placement.hpp"
#include "sched/schedule_registry.hpp"
#include "sim/simulator.hpp"
#include "util/input_error.hpp"

namespace {

// models/mlp.toml has 7 nodes: flatten fc1 relu1 | fc2 relu2 fc3 xent. Nodes 0-5 take 1 ms
// forward and 2 ms backward whatever the batch, the loss nothing, so with the cut before node 3
// both stages take f = 3 ms forward and b = 6 ms backward.
constexpr double kF = 3e-3, kB = 6e-3;

wt::LayerProfile fixed_profile(const wt::Graph& g) {
  wt::LayerProfile p;
  p.model = g.name;
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    const bool loss = n + 1 == g.nodes.size();
    p.nodes.push_back(g.nodes[n].name);
    p.timing.push_back({loss ? 0 : 1e-3, 0, loss ? 0 : 2e-3, 0});
  }
  return p;
}

// Links cost nothing unless asked; optimizer steps are free (infinite memory bandwidth).
wt::DeviceModel free_device() {
  wt::DeviceModel d;
  d.name = "test";
  d.peak_flops = 1e12;
  d.memory_bandwidth = 1e30;
  d.ranks_per_node = 8;
  d.intra_bytes_per_s = d.inter_bytes_per_s = 1e30;
  return d;
}

struct SimulatedMlp {
  wt::Graph graph = wt::Graph::load(WT_SOURCE_DIR "/models/mlp.toml");
  wt::LayerProfile profile = fixed_profile(graph);
  wt::RunConfig config;
  wt::WeightCodec codec;
  int64_t scatter_bytes_per_sample = 0;

  double background_tasklet_s = 0;
  // Applied to the generated program before it is simulated (a placement, say).
  std::function<wt::Program(const wt::Program&, const wt::ScheduleInput&)> transform;

  wt::SimResult run(const std::string& kind, int ranks, const wt::DeviceModel& device,
                    int microbatches = 1) {
    config.schedule.kind = kind;
    config.schedule.microbatches = microbatches;
    config.train.global_batch = 32;
    const int stages = kind == "burst" ? 2 : wt::ScheduleRegistry::stage_count(kind, ranks);
    std::vector<int> cuts;
    if (stages == 2) cuts = {3};
    wt::ScheduleInput in =
        wt::make_schedule_input(graph, cuts, config.schedule, config.train.global_batch, ranks);
    if (kind == "burst") in.stage_ranks = {ranks, 1};  // the second stage on rank 0 alone
    wt::Program p = wt::ScheduleRegistry::generate(kind, in);
    if (transform) p = transform(p, in);
    const wt::CostModel costs(graph, cuts, device, &profile, 1);
    wt::SimOptions o;
    o.global_batch = 32;
    o.record_spans = true;
    o.codec = codec;
    o.scatter_bytes_per_sample = scatter_bytes_per_sample;
    o.background_tasklet_s = background_tasklet_s;
    return wt::simulate(p, costs, o);
  }
};

TEST(Simulator, VanillaModelParallelRunsStagesOneAfterAnother) {
  SimulatedMlp s;
  const wt::SimResult r = s.run("pipeline", 2, free_device());
  EXPECT_NEAR(r.step_s, 2 * kF + 2 * kB, 1e-9);
  EXPECT_EQ(r.samples_per_step, 32);
  EXPECT_NEAR(r.busy_fraction(0), 0.5, 1e-6);  // each rank idles while the other computes
}

// DeepPool multiplexing: rank 0 idles in [f, f + 2b + f) = [3, 12) ms, rank 1 in [0, 3) and
// [12, 18). Tasklets of 1 ms fill both exactly; of 2 ms, the last one before each foreground
// compute runs over its arrival by 1 ms (no preemption): F1 starts at 4, B0 at 13, the step
// ends at 19.
TEST(Simulator, BackgroundTaskletsFillIdleComputeWithoutPreemption) {
  SimulatedMlp s;
  s.background_tasklet_s = 1e-3;
  wt::SimResult r = s.run("pipeline", 2, free_device());
  EXPECT_NEAR(r.step_s, 2 * kF + 2 * kB, 1e-9);
  EXPECT_NEAR(r.background_s[0], 9e-3, 1e-9);
  EXPECT_NEAR(r.background_s[1], 9e-3, 1e-9);
  s.background_tasklet_s = 2e-3;
  r = s.run("pipeline", 2, free_device());
  EXPECT_NEAR(r.step_s, 19e-3, 1e-9);
  EXPECT_NEAR(r.background_s[0], 10e-3, 1e-9);  // tasklets at 3, 5, 7, 9, 11
  EXPECT_NEAR(r.background_s[1], 10e-3, 1e-9);  // at 0, 2, then 13, 15, 17
  s.background_tasklet_s = 0;
  EXPECT_EQ(s.run("pipeline", 2, free_device()).background_s, std::vector<double>(2, 0.0));
}

TEST(Simulator, GPipeFillDrainTakesMPlusNMinusOneCycles) {
  SimulatedMlp s;
  const wt::SimResult r = s.run("pipeline", 2, free_device(), 4);
  EXPECT_NEAR(r.step_s, (4 + 2 - 1) * (kF + kB), 1e-9);
}

TEST(Simulator, WavesKeepsEveryRankBusyWithNBatchesInFlight) {
  SimulatedMlp s;
  const wt::SimResult waves = s.run("waves", 2, free_device());
  const wt::SimResult vanilla = s.run("pipeline", 2, free_device());
  EXPECT_NEAR(waves.step_s, 2 * kF + 2 * kB, 1e-9);
  EXPECT_EQ(waves.samples_per_step, 64);
  EXPECT_NEAR(waves.busy_fraction(0), 1.0, 1e-6);
  EXPECT_NEAR(waves.samples_per_s() / vanilla.samples_per_s(), 2.0, 1e-6);
}

TEST(Simulator, MessagesCostAlphaPlusBytesOverBeta) {
  SimulatedMlp s;
  wt::DeviceModel d = free_device();
  d.intra_alpha_s = 1e-3;
  const double free = s.run("pipeline", 2, free_device()).step_s;
  // One activation forward, one gradient back: two latencies on the critical path.
  EXPECT_NEAR(s.run("pipeline", 2, d).step_s - free, 2e-3, 1e-9);
  d.intra_alpha_s = 0;
  d.intra_bytes_per_s = 1e9;
  const int64_t activation = 32 * 256 * 4;  // fc1's output after relu1, 32 samples
  EXPECT_NEAR(s.run("pipeline", 2, d).step_s - free, 2 * activation / 1e9, 1e-9);
  // Different nodes: the inter-node figures apply.
  d.ranks_per_node = 1;
  d.inter_bytes_per_s = 0.5e9;
  EXPECT_NEAR(s.run("pipeline", 2, d).step_s - free, 2 * activation / 0.5e9, 1e-9);
}

TEST(Simulator, GangAllReduceWaitsForTheRingTime) {
  SimulatedMlp s;
  wt::DeviceModel d = free_device();
  const double free = s.run("gang", 4, d).step_s;
  EXPECT_NEAR(free, 2 * kF + 2 * kB, 1e-9);
  d.intra_alpha_s = 1e-4;
  const wt::SimResult r = s.run("gang", 4, d);
  // The last bucket's allreduce (the first layers' gradients) cannot overlap any backward:
  // 2(p-1) latency steps at least.
  EXPECT_GE(r.step_s - free, 2 * 3 * 1e-4 - 1e-9);
  EXPECT_GT(r.comm_s[0], 0);
}

TEST(Simulator, PeakMemoryIsWeightsStateOneBatchOfActivationsAndTheBackwardsWorkingSet) {
  SimulatedMlp s;
  const wt::SimResult r = s.run("gang", 1, free_device());
  int64_t params = 0, activations = 0, working = 0, previous_out = 0;
  for (const auto& node : s.graph.nodes) {
    for (const auto& spec : node.layer->param_specs()) params += wt::shape_numel(spec.shape) * 4;
    const int64_t out = wt::shape_numel(node.out_shape) * 4 * 32;
    activations += out;
    // At each node a backward holds the gradients of its output and its input at once.
    working = std::max(working, out + previous_out);
    previous_out = out;
  }
  // SGD with momentum: parameters, gradients and one state float per parameter; the peak comes
  // as the backward begins, every activation still saved.
  EXPECT_EQ(r.peak_bytes[0], 3 * params + activations + working);
  // Two replicas of tick-tock hold twice the weights.
  const wt::SimResult tt = s.run("ticktock", 1, free_device());
  EXPECT_GE(tt.peak_bytes[0], 6 * params);
}

// Bytes in use on rank 0 from time t on (the last change at or before t).
int64_t bytes_at(const std::vector<wt::SimulatedMemory>& memory, double t) {
  int64_t bytes = 0;
  for (const wt::SimulatedMemory& m : memory)
    if (m.rank == 0 && m.t_s <= t + 1e-15) bytes = m.bytes;
  return bytes;
}

// A backward in halves (sched/job_placement.hpp's split_backward) costs the whole pass in all and
// holds the node's working set and saved activations until its second half ends: the same step
// time and the same memory at every moment as node by node.
TEST(Simulator, BackwardHalvesCostAndHoldWhatTheWholePassDoes) {
  SimulatedMlp s;
  s.transform = [](const wt::Program& p, const wt::ScheduleInput& in) {
    return wt::per_node(p, in.stages);
  };
  const wt::SimResult nodes = s.run("gang", 1, free_device());
  s.transform = [](const wt::Program& p, const wt::ScheduleInput& in) {
    return wt::split_backward(wt::per_node(p, in.stages), std::vector<char>(64, 1));
  };
  const wt::SimResult halves = s.run("gang", 1, free_device());
  EXPECT_NEAR(nodes.step_s, 2 * kF + 2 * kB, 1e-9);
  EXPECT_NEAR(halves.step_s, nodes.step_s, 1e-12);
  EXPECT_EQ(halves.peak_bytes, nodes.peak_bytes);
  ASSERT_FALSE(halves.memory.empty());
  for (const auto* timeline : {&nodes.memory, &halves.memory})
    for (const wt::SimulatedMemory& m : *timeline) {
      EXPECT_EQ(bytes_at(halves.memory, m.t_s), bytes_at(nodes.memory, m.t_s)) << "at " << m.t_s;
      // Between a node's halves: its middle (its backward takes 2 ms, so each half 1 ms).
      EXPECT_EQ(bytes_at(halves.memory, m.t_s + 1e-3), bytes_at(nodes.memory, m.t_s + 1e-3))
          << "at " << m.t_s + 1e-3;
    }
}

TEST(Simulator, ScalesToAThousandRanks) {
  SimulatedMlp s;
  const wt::SimResult r = s.run("gang", 1024, wt::load_device_model("a100"));
  EXPECT_GT(r.step_s, 0);
  EXPECT_EQ(r.peak_bytes.size(), 1024u);
}

TEST(DeviceModel, BuiltInsAndFilesWithClearErrors) {
  EXPECT_EQ(wt::load_device_model("v100").ranks_per_node, 8);
  EXPECT_THROW(wt::load_device_model("tpu"), wt::InputError);
  const std::string path = ::testing::TempDir() + "/device.toml";
  std::ofstream(path) << "base = \"a100\"\nname = \"mine\"\nintra_bytes_per_s = 1e9\n";
  const wt::DeviceModel d = wt::load_device_model(path);
  EXPECT_EQ(d.name, "mine");
  EXPECT_EQ(d.intra_bytes_per_s, 1e9);
  EXPECT_EQ(d.peak_flops, wt::load_device_model("a100").peak_flops);
  std::ofstream(path) << "base = \"a100\"\n\nflops = 3\n";
  try {
    wt::load_device_model(path);
    FAIL() << "accepted an unknown key";
  } catch (const wt::InputError& e) {
    EXPECT_EQ(e.line(), 3);
    EXPECT_EQ(e.key(), "flops");
  }
  std::ofstream(path) << "base = \"a100\"\nranks_per_node = 2.5\n";
  EXPECT_THROW(wt::load_device_model(path), wt::InputError);
  std::ofstream(path) << "peak_flops = 1e12\n";  // bandwidths missing
  EXPECT_THROW(wt::load_device_model(path), wt::InputError);
}

}  // namespace

// burst with the second stage on rank 0: rank 0 runs both stages one after the other, rank 1 the
// first only (idle half the step); with free links that is 2f + 2b. A costly link puts the rows
// going to rank 0 and their gradients coming back on the critical path: at least 2 alpha more.
TEST(Simulator, BurstRunsEachStageOnItsRanksAndPricesTheRows) {
  SimulatedMlp s;
  const wt::SimResult free = s.run("burst", 2, free_device());
  EXPECT_NEAR(free.step_s, 2 * kF + 2 * kB, 1e-9);
  EXPECT_NEAR(free.busy_fraction(0), 1.0, 1e-6);
  EXPECT_NEAR(free.busy_fraction(1), 0.5, 1e-6);
  wt::DeviceModel slow = free_device();
  slow.intra_alpha_s = slow.inter_alpha_s = 1e-3;
  const wt::SimResult costly = s.run("burst", 2, slow);
  EXPECT_GE(costly.step_s, free.step_s + 2e-3 - 1e-9);
}

// ScaleDNN's codec on waves' stage broadcasts: with a link that costs only bandwidth and free
// memory traffic, the words (a third of the parameter bytes for scalednn, half for bf16) make the
// step shorter, in that order; min_bytes above every stage's parameters sends them exact again.
TEST(Simulator, CompressedBroadcastsMoveFewerBytes) {
  SimulatedMlp s;
  wt::DeviceModel d = free_device();
  d.intra_bytes_per_s = d.inter_bytes_per_s = 1e8;  // fc1: 0.8 MB, 8 ms a broadcast
  const double none = s.run("waves", 2, d).step_s;
  s.codec.kind = "bf16";
  const double bf16 = s.run("waves", 2, d).step_s;
  s.codec.kind = "scalednn";
  const double scalednn = s.run("waves", 2, d).step_s;
  EXPECT_LT(scalednn, bf16);
  EXPECT_LT(bf16, none);
  s.codec.min_bytes = 1 << 30;
  EXPECT_DOUBLE_EQ(s.run("waves", 2, d).step_s, none);
}

// data.distribution = "scatter": every rank's load waits for rank 0's link to send the other
// parts; sharded loads are preloaded and free.
TEST(Simulator, ScatteredBatchesCostRankZerosLink) {
  SimulatedMlp s;
  wt::DeviceModel d = free_device();
  d.intra_bytes_per_s = d.inter_bytes_per_s = 1e8;
  d.intra_alpha_s = d.inter_alpha_s = 0;
  const double shard = s.run("gang", 2, d).step_s;
  s.scatter_bytes_per_sample = 3140;  // 784 floats and a label
  const double scatter = s.run("gang", 2, d).step_s;
  EXPECT_NEAR(scatter - shard, 16 * 3140 / 1e8, 1e-9);  // the other rank's 16 samples
}

// gang on N ranks must train the same model as one rank on the same global batches.
//
// Tolerance: the only difference is float summation order. On one rank a weight gradient is one
// GEMM reduction over all 64 samples; on two ranks it is two 32-sample reductions added by the
// allreduce. For a sum of n float terms the rounding error is bounded by about n * eps * sum|terms|
// (eps = 6e-8), i.e. ~4e-6 of the gradient's magnitude for n = 64. SGD with lr 0.05 over a few
// steps moves a weight by at most a few times lr * |g|, so differences of order 1e-6 in weights of
// order 0.1 are expected; we allow 2e-5 * max(1, |w|) and check that training moved the weights
// by far more than that (so the comparison is not vacuous).
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>

#include "comm/mpi_communicator.hpp"
#include "deck/run_config.hpp"
#include "exec/executor.hpp"
#include "model/model.hpp"
#include "sched/schedule_registry.hpp"
#include "synthetic_source.hpp"
#include "test_memory.hpp"

namespace {

using wt::testing::SyntheticSource;

struct Trained {
  std::vector<float> initial, final_values;
  double loss = 0;
};

Trained train_gang(const std::string& model_file, wt::Communicator& comm, int steps,
                   int64_t bucket_bytes, const std::string& gang_sync = "allreduce") {
  wt::Model model(wt::Graph::load(model_file), wt::testing::memory());
  model.init(42);
  wt::RunConfig::Optimizer opt_cfg;
  opt_cfg.kind = "sgd";
  opt_cfg.lr = 0.05;
  opt_cfg.momentum = 0.9;
  opt_cfg.weight_decay = 1e-4;
  auto opt = wt::make_optimizer(opt_cfg, wt::testing::device());
  SyntheticSource source(model.graph.input_shape, model.graph.classes, 64, 3);
  wt::ScheduleInput in;
  in.world_size = comm.size();
  in.deck.bucket_bytes = bucket_bytes;
  in.deck.gang_sync = gang_sync;
  const wt::Stage& st = model.stages[0];
  wt::StageInfo info{st.node_begin, st.node_end, {}};
  for (int n = st.node_begin; n < st.node_end; ++n)
    info.node_param_bytes.push_back(st.node_count[n] * 4);
  in.stages.push_back(info);
  wt::Executor exec(wt::testing::device(), model, comm, *opt, source,
                    wt::ScheduleRegistry::generate("gang", in), 42);
  Trained t;
  t.initial = st.values.to_host();
  for (int s = 0; s < steps; ++s) t.loss = exec.run_step(s, opt_cfg.lr).loss_sum;
  // Under gang_sync = "master" only rank 0 keeps the model between steps.
  if (st.values.defined()) t.final_values = st.values.to_host();
  // Each rank read only its own part of every global batch.
  for (const auto& r : source.requests) {
    EXPECT_EQ(r.part, comm.rank());
    EXPECT_EQ(r.parts, comm.size());
  }
  return t;
}

void expect_equivalent(const std::string& model_name, int64_t bucket_bytes,
                       const std::string& dir = "models",
                       const std::string& gang_sync = "allreduce") {
  const std::string file = std::string(WT_SOURCE_DIR) + "/" + dir + "/" + model_name + ".toml";
  wt::MpiCommunicator world(MPI_COMM_WORLD);
  wt::MpiCommunicator self(MPI_COMM_SELF);
  const int steps = 5;
  Trained parallel = train_gang(file, world, steps, bucket_bytes, gang_sync);
  if (parallel.final_values.empty()) return;  // a master-synchronised peer holds no model
  Trained reference = train_gang(file, self, steps, bucket_bytes);
  ASSERT_EQ(parallel.final_values.size(), reference.final_values.size());
  double worst = 0, moved = 0;
  for (size_t i = 0; i < parallel.final_values.size(); ++i) {
    const double ref = reference.final_values[i];
    worst =
        std::max(worst, std::abs(parallel.final_values[i] - ref) / std::max(1.0, std::abs(ref)));
    moved = std::max(moved, std::abs(ref - reference.initial[i]));
  }
  EXPECT_LE(worst, 2e-5) << model_name << ": parameters differ beyond summation-order noise";
  EXPECT_GE(moved, 1e-3) << model_name
                         << ": training did not move the weights; the test would be vacuous";
  if (world.rank() == 0)
    std::printf(
        "[ gang ] %s: %d ranks vs 1 rank after %d steps: max relative difference %.3g, max weight "
        "change %.3g\n",
        model_name.c_str(), world.size(), steps, worst, moved);
}

}  // namespace

TEST(GangEquivalence, MlpMatchesSingleRank) { expect_equivalent("mlp", 4 << 20); }
TEST(GangEquivalence, LenetMatchesSingleRankWithSmallBuckets) {
  expect_equivalent("lenet", 64 << 10);
}
// Dropout masks are drawn per sample (keyed by its index in the global batch and the node), so a
// sample gets the same mask on whichever rank computes it: dropout trains the same model too.
TEST(GangEquivalence, DropoutMasksDoNotDependOnTheRankCount) {
  expect_equivalent("mlp_dropout", 4 << 20, "tests/models");
}
// ScaleDNN's baseline (gang_sync = "master": buckets reduced onto rank 0, which steps and
// broadcasts the model before each forward) trains what the allreduce trains: only the order in
// which the ranks' partial sums are added differs.
TEST(GangEquivalence, MasterSyncMatchesSingleRank) {
  expect_equivalent("lenet", 64 << 10, "models", "master");
}

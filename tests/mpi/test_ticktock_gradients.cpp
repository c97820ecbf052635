// ticktock's cross-wave synchronisation (Wavelet Eq. 1, Lemma 1), checked on 2 real MPI ranks.
// Every local gradient is recorded separately (the replica's gradient right after each backward,
// through the executor's observer); the update each wave's replica actually applied is read back
// from its weights (plain SGD: w_after = w_before - lr * G). It must equal
//   tick, step k: G = sum_i (g_tick,k^i + g_tock,k-1^i)  (k = 0: 2 g_tick,0^i — g_0 alone)
//   tock, step k: G = sum_i (g_tock,k^i + g_tick,k^i)
// in the executor's scaling (losses scaled by 1 / (2 B), so these sums are Eq. 1's averages).
//
// Tolerance: G is recovered as (w_before - w_after) / lr, whose rounding is about
// eps * |w| / lr (eps = 6e-8), plus float summation noise of ~1e-6 relative in G itself.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <set>

#include "comm/mpi_communicator.hpp"
#include "deck/run_config.hpp"
#include "exec/executor.hpp"
#include "exec/schedule_input.hpp"
#include "model/model.hpp"
#include "sched/schedule_registry.hpp"
#include "synthetic_source.hpp"
#include "test_memory.hpp"

namespace {

using Vec = std::vector<float>;

Vec copy_of(const wt::Tensor& t) { return t.to_host(); }

Vec sum_over_ranks(Vec v, wt::Communicator& comm) {
  std::vector<double> d(v.begin(), v.end());
  comm.allreduce_sum(d.data(), static_cast<int64_t>(d.size()), 0);
  return Vec(d.begin(), d.end());
}

}  // namespace

TEST(TicktockGradients, AppliedUpdateIsTheCrossWaveAverageOfLocalGradients) {
  const std::string file = std::string(WT_SOURCE_DIR) + "/models/mlp.toml";
  wt::MpiCommunicator comm(MPI_COMM_WORLD);
  wt::Model tick(wt::Graph::load(file), wt::testing::memory()),
      tock(wt::Graph::load(file), wt::testing::memory());
  tick.init(42);
  tock.init(42);
  wt::Model* replicas[2] = {&tick, &tock};
  wt::RunConfig cfg;
  cfg.schedule.kind = "ticktock";
  cfg.train.global_batch = 64;
  cfg.optimizer.kind = "sgd";
  cfg.optimizer.momentum = 0;
  cfg.optimizer.weight_decay = 0;
  const double lr = 0.1;
  auto opt = wt::make_optimizer(cfg.optimizer, wt::testing::device());
  wt::testing::SyntheticSource source(tick.graph.input_shape, tick.graph.classes, 64, 5);
  wt::Program program = wt::ScheduleRegistry::generate(
      "ticktock", wt::make_schedule_input(tick, cfg.schedule, cfg.train.global_batch, comm.size()));
  ASSERT_EQ(program.ranks[comm.rank()].streams.size(), 2u) << "one stream per wave";
  wt::Executor exec(wt::testing::device(), tick, comm, *opt, source, program, 42, {&tock});

  Vec local[2];  // this step's local gradient per wave
  // Records each wave's local gradient right after its backward pass, before any mixing.
  struct GradientRecorder : wt::InstructionObserver {
    Vec* local;
    wt::Model** replicas;
    void executed(int, const wt::Instruction& ins, double, double, int64_t) override {
      if (ins.op == wt::OpCode::Backward)
        local[ins.replica] = copy_of(replicas[ins.replica]->stages[0].grads);
    }
    void completed(int, double) override {}
  } recorder;
  recorder.local = local;
  recorder.replicas = replicas;
  exec.set_observer(&recorder);

  const int steps = 4;
  Vec previous_tock;  // sum over ranks of the tock's local gradient one step earlier
  double worst = 0, mixed_in = 0, worst_tol_ratio = 0;
  for (int k = 0; k < steps; ++k) {
    const Vec before[2] = {copy_of(tick.stages[0].values), copy_of(tock.stages[0].values)};
    exec.run_step(k, lr);
    const Vec after[2] = {copy_of(tick.stages[0].values), copy_of(tock.stages[0].values)};
    const Vec g_tick = sum_over_ranks(local[0], comm), g_tock = sum_over_ranks(local[1], comm);
    for (int w = 0; w < 2; ++w) {
      for (size_t i = 0; i < g_tick.size(); ++i) {
        double expected;
        if (w == 0)
          expected = k == 0 ? 2.0 * g_tick[i] : double(g_tick[i]) + previous_tock[i];
        else
          expected = double(g_tock[i]) + g_tick[i];
        const double applied = (double(before[w][i]) - after[w][i]) / lr;
        const double tol = 4 * 6e-8 * std::max(1.0, std::abs(double(before[w][i]))) / lr +
                           1e-5 * std::abs(expected);
        worst = std::max(worst, std::abs(applied - expected));
        worst_tol_ratio = std::max(worst_tol_ratio, std::abs(applied - expected) / tol);
        // How much the other wave's gradient contributes: the check must be able to see it.
        if (k > 0 || w == 1)
          mixed_in = std::max(mixed_in, std::abs(w == 0 ? double(previous_tock[i]) : g_tick[i]));
      }
    }
    previous_tock = g_tock;
  }
  EXPECT_LE(worst_tol_ratio, 1.0) << "applied update differs from Eq. 1 by " << worst;
  EXPECT_GE(mixed_in, 1e3 * 4 * 6e-8 / lr) << "the other wave's gradient is too small to see";
  // Each (rank, wave, iteration) read its own samples: part `rank` of global batch 2k + wave.
  ASSERT_EQ(source.requests.size(), size_t(2 * steps));
  for (size_t q = 0; q < source.requests.size(); ++q) {
    EXPECT_EQ(source.requests[q].part, comm.rank());
    EXPECT_EQ(source.requests[q].parts, comm.size());
  }
  std::set<int64_t> sequences;
  for (const auto& q : source.requests) sequences.insert(q.sequence);
  EXPECT_EQ(sequences.size(), size_t(2 * steps));
  if (comm.rank() == 0)
    std::printf(
        "[ ticktock ] %d ranks, %d steps: max |applied - Eq.1| = %.3g (%.2f of tolerance), other "
        "wave's gradient up to %.3g\n",
        comm.size(), steps, worst, worst_tol_ratio, mixed_in);
}

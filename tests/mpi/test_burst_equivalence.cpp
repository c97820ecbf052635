// burst on N ranks must train the same model as data parallelism (gang) on N ranks and on one
// rank, on the same global batches, whatever the plan: the plan only changes which rank computes
// which rows of each layer, never which samples or weights.
//
// Tolerance: as in test_gang_equivalence.cpp, only the grouping of per-sample sums changes (a
// layer run on 1 rank reduces its weight gradient over 64 samples in one GEMM; on g ranks as g
// partial GEMMs added by the allreduce), i.e. rounding of order n * eps * sum|terms| ~ 4e-6 of a
// gradient for n = 64; a few steps of SGD (lr 0.05, momentum 0.9) or AdamW (lr 1e-3, whose update
// is normalised, so a rounding difference in g moves w by ~lr * 4e-6 / |g| relative terms) keep
// weights within 2e-5 * max(1, |w|), while training moves them by far more (checked). LeNet's conv2
// runs as Winograd F(2x2, 5x5) (device.conv_algorithm = "auto"): its weight gradient sums the
// tiles in the transformed domain, whose output transform has entries up to 16 (256 at the corner
// taps), so regrouping the same sums rounds about 10x more there (1.4e-4 after 5 AdamW steps,
// measured); LeNet's weights get 3e-4, still under the 1e-3 that training must move them. The
// members of a stage's group apply the same summed gradient to the same weights, so they must agree
// bitwise after every step.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <cstring>

#include "comm/mpi_communicator.hpp"
#include "deck/run_config.hpp"
#include "exec/executor.hpp"
#include "exec/schedule_input.hpp"
#include "model/model.hpp"
#include "plan/burst_stages.hpp"
#include "pricing/burst_costs.hpp"
#include "sched/schedule_registry.hpp"
#include "synthetic_source.hpp"
#include "test_memory.hpp"

namespace {

using wt::testing::SyntheticSource;

constexpr int64_t kBatch = 64;
constexpr int kSteps = 5;

struct Trained {
  std::vector<float> initial, final_values;  // every stage's values, on rank 0
  std::vector<double> losses;                // per step, summed over ranks
};

wt::RunConfig::Optimizer optimizer(const std::string& kind) {
  wt::RunConfig::Optimizer o;
  o.kind = kind;
  o.lr = kind == "sgd" ? 0.05 : 1e-3;
  o.momentum = 0.9;
  o.weight_decay = 1e-4;
  return o;
}

// Every parameter in the order of a one-stage model, which lays its nodes out last to first (a
// stage's values are its nodes in reverse, so gradient buckets are contiguous).
std::vector<float> all_values(const wt::Model& model) {
  std::vector<float> v;
  for (auto st = model.stages.rbegin(); st != model.stages.rend(); ++st)
    if (st->values.defined()) {
      const std::vector<float> part = st->values.to_host();
      v.insert(v.end(), part.begin(), part.end());
    }
  return v;
}

uint64_t hash_of(const std::vector<float>& v) {
  uint64_t h = 0xcbf29ce484222325ull;
  const auto* p = reinterpret_cast<const unsigned char*>(v.data());
  for (size_t i = 0; i < v.size() * sizeof(float); ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

// Every rank that runs stage s holds bitwise the values rank 0 holds.
void expect_groups_identical(const wt::Model& model, const std::vector<int>& stage_ranks,
                             wt::Communicator& comm, int step) {
  for (size_t s = 0; s < stage_ranks.size(); ++s) {
    const wt::Stage& st = model.stages[s];
    uint64_t mine = 0;
    if (comm.rank() < stage_ranks[s] && st.param_count() > 0) mine = hash_of(st.values.to_host());
    std::vector<uint64_t> all(size_t(comm.size()));
    MPI_Allgather(&mine, 1, MPI_UINT64_T, all.data(), 1, MPI_UINT64_T, MPI_COMM_WORLD);
    for (int r = 1; r < stage_ranks[s]; ++r)
      EXPECT_EQ(all[size_t(r)], all[0]) << "stage " << s << " on rank " << r << " after step "
                                        << step << " differs from rank 0's";
  }
}

// kind "gang": one stage on every rank; "burst": the plan unit_counts (one per planning unit).
// A communicator of its own per run: an executor numbers the groups it creates from 1.
Trained train(const std::string& file, MPI_Comm mpi_comm, const std::string& kind,
              const std::vector<int>& unit_counts, const std::string& opt_kind) {
  wt::MpiCommunicator comm(mpi_comm);
  wt::Graph graph = wt::Graph::load(file);
  wt::BurstStages plan;
  if (kind == "burst") plan = wt::burst_stages(wt::burst_units(graph), unit_counts);
  wt::Model model(std::move(graph), wt::testing::memory(), plan.cuts);
  model.init(42);
  const wt::RunConfig::Optimizer opt_cfg = optimizer(opt_kind);
  auto opt = wt::make_optimizer(opt_cfg, wt::testing::device());
  SyntheticSource source(model.graph.input_shape, model.graph.classes, kBatch, 3);
  wt::ScheduleOptions options;
  options.bucket_bytes = 1 << 14;  // several buckets per stage
  wt::ScheduleInput in = wt::make_schedule_input(model, options, kBatch, comm.size());
  in.stage_ranks = plan.stage_ranks;
  const wt::Program program = wt::ScheduleRegistry::generate(kind, in);
  wt::validate_program(program, int(model.stages.size()));
  Trained t;
  t.initial = all_values(model);
  wt::Executor exec(wt::testing::device(), model, comm, *opt, source, program, 42);
  for (int s = 0; s < kSteps; ++s) {
    double loss = exec.run_step(s, opt_cfg.lr).loss_sum;
    comm.allreduce_sum(&loss, 1, 0);
    t.losses.push_back(loss);
    if (kind == "burst") expect_groups_identical(model, plan.stage_ranks, comm, s);
  }
  if (comm.rank() == 0) t.final_values = all_values(model);
  return t;
}

void expect_close(const Trained& got, const Trained& want, const std::string& what,
                  double tolerance) {
  ASSERT_EQ(got.losses.size(), want.losses.size());
  for (size_t s = 0; s < got.losses.size(); ++s)
    EXPECT_NEAR(got.losses[s], want.losses[s], 1e-5 * std::abs(want.losses[s]))
        << what << ": loss of step " << s;
  if (want.final_values.empty()) return;  // ranks other than 0
  ASSERT_EQ(got.final_values.size(), want.final_values.size()) << what;
  double worst = 0, moved = 0;
  for (size_t i = 0; i < want.final_values.size(); ++i) {
    const double ref = want.final_values[i];
    worst = std::max(worst, std::abs(got.final_values[i] - ref) / std::max(1.0, std::abs(ref)));
    moved = std::max(moved, std::abs(ref - want.initial[i]));
  }
  EXPECT_LE(worst, tolerance) << what;
  EXPECT_GE(moved, 1e-3) << what << ": training must move the weights";
}

// The plans of the issue, per planning unit on N ranks.
std::vector<std::pair<std::string, std::vector<int>>> plans(const std::string& model, int n) {
  if (model == "mlp")  // flatten | fc1..relu1 | fc2..relu2 | fc3..loss (mlp_dropout's alike)
    return {{"fully connected layers on 1 rank", {n, 1, 1, 1}},
            {"shrink then grow", {n, n, 1, n}},
            {"the loss on 1 rank", {n, n, n, 1}},
            {"everything on rank 0", {1, 1, 1, 1}},
            {"every count", {n, n / 2 > 0 ? n / 2 : 1, 1, n}},
            // a rank that runs only a middle segment loads nothing: its rows all arrive
            {"a wider middle segment", {1, n, 1, 1}}};
  // lenet: conv1..relu1 | pool1 | conv2..relu2 | pool2..flatten | fc1..relu3 | fc2..loss
  return {{"fully connected layers on 1 rank", {n, n, n, n, 1, 1}},
          {"shrink then grow", {n, n, 1, 1, n, n}},
          {"the loss on 1 rank", {n, n, n, n, n, 1}},
          {"everything on rank 0", {1, 1, 1, 1, 1, 1}},
          {"every count", {n, n / 2 > 0 ? n / 2 : 1, 1, n / 2 > 0 ? n / 2 : 1, n, 1}},
          {"a wider middle segment", {1, n, n, 1, 1, 1}}};
}

void check(const std::string& model, const std::string& opt_kind,
           const std::string& dir = "models") {
  const std::string file = std::string(WT_SOURCE_DIR) + "/" + dir + "/" + model + ".toml";
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const Trained gang = train(file, MPI_COMM_WORLD, "gang", {}, opt_kind);
  const Trained one_rank = train(file, MPI_COMM_SELF, "gang", {}, opt_kind);
  const double tolerance = model == "lenet" ? 3e-4 : 2e-5;  // Winograd's regrouping (above)
  for (const auto& [name, counts] : plans(model == "lenet" ? "lenet" : "mlp", ranks)) {
    const Trained burst = train(file, MPI_COMM_WORLD, "burst", counts, opt_kind);
    expect_close(burst, gang, model + " " + opt_kind + " " + name + " against gang", tolerance);
    if (rank == 0)
      expect_close(burst, one_rank, model + " " + opt_kind + " " + name + " against 1 rank",
                   tolerance);
  }
}

TEST(BurstEquivalence, MlpSgdMatchesDataParallel) { check("mlp", "sgd"); }
TEST(BurstEquivalence, MlpAdamwMatchesDataParallel) { check("mlp", "adamw"); }
TEST(BurstEquivalence, LenetSgdMatchesDataParallel) { check("lenet", "sgd"); }
TEST(BurstEquivalence, LenetAdamwMatchesDataParallel) { check("lenet", "adamw"); }
// Dropout masks are keyed by each row's sample index in the global batch, not by its position on
// the rank: rows re-laid out of order (4 ranks to 2 puts samples 0-15 and 48-63 on rank 0) still
// get their samples' masks.
TEST(BurstEquivalence, DropoutMasksFollowTheSamples) {
  check("mlp_dropout", "sgd", "tests/models");
}

}  // namespace

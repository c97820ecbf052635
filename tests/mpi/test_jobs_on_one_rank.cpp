// Several jobs on one rank (issue 11 §1): two jobs of different models, driven by one training
// loop on the same ranks and the same device, take turns step by step and train exactly the
// models they train alone (bitwise: the jobs share the device, never state).
#include <gtest/gtest.h>
#include <mpi.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "app/training_loop.hpp"
#include "comm/mpi_communicator.hpp"
#include "deck/deck_parser.hpp"
#include "device/device_context.hpp"
#include "exec/node_memory_recorder.hpp"
#include "job/job.hpp"
#include "plan/node_groups.hpp"
#include "unit/dataset_test_util.hpp"

namespace {

// A scratch directory every rank sees at the same path (rank 0's pid names it).
std::filesystem::path shared_dir(const std::string& tag) {
  int pid = ::getpid();
  MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return std::filesystem::temp_directory_path() / ("wt_" + tag + "_" + std::to_string(pid));
}

wt::RunConfig deck(const std::filesystem::path& dir, const std::string& name,
                   const std::string& model, const std::string& optimizer) {
  const std::string path = (dir / (name + ".toml")).string();
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    std::ofstream(path) << "[run]\nname = \"" << name << "\"\noutput_dir = \"" << dir.string()
                        << "\"\nseed = 7\n[data]\npath = \""
                        << (dir / "d.h5").string()
                        // No preload: the next batch, read on a background thread, would land
                        // before or after a step's peak by timing, and the peaks are compared.
                        << "\"\npreload = false\n[model]\nfile = \"" << WT_SOURCE_DIR << "/models/"
                        << model << "\"\n[optimizer]\nkind = \"" << optimizer
                        << "\"\nlr = 0.01\n[train]\nglobal_batch = 16\nepochs = 1\n"
                        << "eval_every_epoch = false\n";
  }
  MPI_Barrier(MPI_COMM_WORLD);
  return wt::parse_deck(path, {});
}

std::vector<float> parameters(wt::Job& job) {
  std::vector<float> all;
  for (const wt::Stage& s : job.model().stages)
    if (s.values.defined()) {
      const std::vector<float> values = s.values.to_host();  // a staged copy on the strict device
      all.insert(all.end(), values.begin(), values.end());
    }
  return all;
}

// Runs the given jobs to the end in one loop on one device context; returns each job's
// parameters. `peaks`, when given, receives each job's peak bytes in use on the device.
// How the jobs share the device: whole steps in turn (the default), or interleaved inside each
// step, job i on stream i with its Forward and Backward node by node (co-location).
struct Sharing {
  bool interleaved = false;
  wt::PairedRounds* pairs =
      nullptr;  // paired rounds (Waterwave) instead of one instruction in turn
  wt::DeviceKind device = wt::DeviceKind::Host;
  uint64_t strict_seed = 1;
  std::vector<std::pair<int, int>>* issued = nullptr;  // (job, stream) of each instruction issued
};

// Appends (job, stream) of every instruction a job's executor issues, in issue order.
class IssueLog final : public wt::InstructionObserver {
 public:
  IssueLog(int job, std::vector<std::pair<int, int>>& log) : job_(job), log_(log) {}
  void executed(int stream, const wt::Instruction&, double, double, int64_t) override {
    log_.emplace_back(job_, stream);
  }
  void completed(int, double) override {}

 private:
  int job_;
  std::vector<std::pair<int, int>>& log_;
};

std::vector<std::vector<float>> train_together(std::vector<wt::RunConfig> decks,
                                               const std::string& run_suffix,
                                               wt::Communicator& comm, int64_t steps = 6,
                                               std::vector<size_t>* peaks = nullptr,
                                               Sharing sharing = {}) {
  wt::DeviceContext device(0, sharing.device, sharing.strict_seed);  // shared by the rank's jobs
  std::vector<std::unique_ptr<wt::Job>> jobs;
  wt::TrainingLoop loop;
  loop.set_interleaved(sharing.interleaved);
  loop.set_paired_rounds(sharing.pairs);
  // Waterwave's allocator: another stream's frees wait for a pair boundary's synchronisation.
  if (sharing.pairs) device.allocator().set_cross_stream_reuse(wt::CrossStreamReuse::AfterSync);
  for (const wt::RunConfig& cfg : decks) {
    wt::JobOptions options;
    options.id = int(jobs.size());
    options.run_dir = cfg.run.output_dir + "/" + cfg.run.name + run_suffix;
    options.max_steps = steps;
    options.quiet = true;
    if (sharing.interleaved || sharing.pairs) options.colocated_stream = options.id % 2;
    jobs.push_back(std::make_unique<wt::Job>(cfg, options, device, comm.rank(), comm.size()));
    jobs.back()->start(comm);
    loop.add_job(*jobs.back(), {});
  }
  std::vector<std::unique_ptr<IssueLog>> logs;
  if (sharing.issued)
    for (auto& job : jobs) {
      logs.push_back(std::make_unique<IssueLog>(job->id(), *sharing.issued));
      job->executor().set_observer(logs.back().get());
    }
  loop.run();
  std::vector<std::vector<float>> out;
  for (auto& job : jobs) {
    out.push_back(parameters(*job));
    if (peaks) peaks->push_back(device.allocator().job_stats(job->id()).peak_in_use);
  }
  return out;
}

// An mlp deck (SGD) and a lenet deck (AdamW) over one synthetic dataset in a scratch directory
// every rank sees, removed at the end.
struct TwoDecks {
  TwoDecks(const std::string& tag, wt::Communicator& comm)
      : dir(shared_dir(tag)), rank(comm.rank()) {
    if (rank == 0) {
      std::filesystem::create_directories(dir);
      wt::testutil::write_synthetic_dataset((dir / "d.h5").string(), 256, 32, {1, 28, 28});
    }
    MPI_Barrier(MPI_COMM_WORLD);
    mlp = deck(dir, "mlp", "mlp.toml", "sgd");
    lenet = deck(dir, "lenet", "lenet.toml", "adamw");
  }
  ~TwoDecks() {
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) std::filesystem::remove_all(dir);
  }
  std::filesystem::path dir;
  int rank;
  wt::RunConfig mlp, lenet;
};

TEST(JobsOnOneRank, TwoJobsTrainAsTheyDoAlone) {
  wt::MpiCommunicator comm(MPI_COMM_WORLD);
  const TwoDecks decks("jobs", comm);
  const wt::RunConfig& mlp = decks.mlp;
  const wt::RunConfig& lenet = decks.lenet;

  const auto alone_mlp = train_together({mlp}, "_alone", comm);
  const auto alone_lenet = train_together({lenet}, "_alone", comm);
  std::vector<size_t> alone_peak, together_peak;
  train_together({lenet}, "_alone_again", comm, 6, &alone_peak);
  const auto together = train_together({mlp, lenet}, "_together", comm, 6, &together_peak);
  ASSERT_EQ(together.size(), 2u);
  // One device, one account per job: lenet's bytes are its own whether or not mlp is there.
  ASSERT_EQ(together_peak.size(), 2u);
  EXPECT_GT(together_peak[0], 0u);
  EXPECT_LT(together_peak[0], together_peak[1]);  // mlp's parameters and batches are smaller
  EXPECT_EQ(together_peak[1], alone_peak[0]);
  EXPECT_FALSE(alone_mlp[0].empty());
  EXPECT_NE(alone_mlp[0].size(), alone_lenet[0].size());  // different models
  // One step already moves the parameters: equality below is not two untrained models.
  EXPECT_NE(train_together({mlp}, "_one_step", comm, 1)[0], alone_mlp[0]);
  EXPECT_EQ(together[0], alone_mlp[0]);
  EXPECT_EQ(together[1], alone_lenet[0]);
}

// Co-location (Waterwave, issue 20 proof 0): the two jobs interleaved inside every step, one
// instruction of each in turn, on streams 0 and 1 with their passes node by node, train bitwise
// what each trains alone: on the host device, and on the strict device, whose streams run in a
// seeded shuffled order, so the jobs' kernels really interleave and any state the jobs shared
// would show.
TEST(JobsOnOneRank, TwoJobsInterleavedOnTwoStreamsTrainAsTheyDoAlone) {
  wt::MpiCommunicator comm(MPI_COMM_WORLD);
  const TwoDecks decks("colocated", comm);
  const wt::RunConfig& mlp = decks.mlp;
  const wt::RunConfig& lenet = decks.lenet;
  const int64_t steps = 4;
  const auto alone_mlp = train_together({mlp}, "_alone", comm, steps);
  const auto alone_lenet = train_together({lenet}, "_alone", comm, steps);
  for (const wt::DeviceKind kind : {wt::DeviceKind::Host, wt::DeviceKind::Strict}) {
    for (const uint64_t seed : {uint64_t(1), uint64_t(2)}) {
      if (kind == wt::DeviceKind::Host && seed > 1) continue;
      SCOPED_TRACE(std::string(wt::device_kind_name(kind)) + " seed " + std::to_string(seed));
      const std::string suffix =
          "_" + std::string(wt::device_kind_name(kind)) + std::to_string(seed);
      std::vector<std::pair<int, int>> issued;
      const auto together = train_together({mlp, lenet}, suffix, comm, steps, nullptr,
                                           Sharing{true, nullptr, kind, seed, &issued});
      ASSERT_EQ(together.size(), 2u);
      // Interleaved inside the step: each job on its own stream, and the first step's
      // instructions alternate between the jobs from the start.
      ASSERT_GT(issued.size(), 8u);
      for (const auto& [job, stream] : issued) EXPECT_EQ(job, stream);
      EXPECT_EQ(issued[0].first, 0);
      EXPECT_EQ(issued[1].first, 1);
      EXPECT_EQ(issued[2].first, 0);
      EXPECT_EQ(issued[3].first, 1);
      EXPECT_EQ(together[0], alone_mlp[0]);
      EXPECT_EQ(together[1], alone_lenet[0]);
    }
  }
}

// Waterwave's memory profile (issue 20 piece 2): lenet's second step, node by node, as the
// allocator saw it. The nodes' nets add up to the step's, the forward keeps activations and the
// backward gives them back, and node groups cut from it are real groups.
TEST(JobsOnOneRank, MemoryProfileOfAStepNodeByNode) {
  wt::MpiCommunicator comm(MPI_COMM_WORLD);
  const TwoDecks decks("profile", comm);
  wt::DeviceContext device;
  wt::JobOptions options;
  options.run_dir = decks.lenet.run.output_dir + "/profile";
  options.max_steps = 2;
  options.quiet = true;
  options.colocated_stream = 0;  // node by node
  wt::Job job(decks.lenet, options, device, comm.rank(), comm.size());
  job.start(comm);
  const int nodes = static_cast<int>(job.model().graph.nodes.size());
  wt::NodeMemoryRecorder recorder(device.allocator(), job.id(), nodes);
  job.executor().set_observer(&recorder);
  job.run_step(0);  // the first step creates the optimizer's state: the profile is the second's
  recorder.begin();
  job.run_step(1);
  const wt::NodeMemoryProfile profile = recorder.profile();
  int64_t forward = 0, backward = 0;
  std::string table;
  for (int i = 0; i < nodes; ++i) {
    const auto& f = profile.forward[size_t(i)];
    const auto& b = profile.backward[size_t(i)];
    EXPECT_GE(f.peak, std::max<int64_t>(f.net, 0)) << "node " << i;
    EXPECT_GE(b.peak, std::max<int64_t>(b.net, 0)) << "node " << i;
    forward += f.net;
    backward += b.net;
    table += job.model().graph.nodes[size_t(i)].name + " " + std::to_string(f.net) + " " +
             std::to_string(b.net) + "; ";
  }
  EXPECT_EQ(forward + backward, recorder.step_net()) << table;
  EXPECT_GT(forward, 100'000) << table;  // 16 samples of lenet's activations
  EXPECT_LT(backward, -forward / 2) << table;
  // Forward passes that keep their output: not flatten's, a view of its input, nor the three
  // ReLUs' that model.fuse_epilogues (on by default) folds into the conv2d/linear before them.
  int keeping = 0;
  for (int i = 0; i < nodes; ++i) {
    EXPECT_GE(profile.forward[size_t(i)].net, 0) << table;
    keeping += profile.forward[size_t(i)].net > 0;
  }
  EXPECT_EQ(keeping, nodes - 4) << table;
  const auto groups = wt::node_groups(profile, forward / 3);
  int forward_groups = 0;
  for (const auto& g : groups) forward_groups += g.allocating;
  EXPECT_GE(forward_groups, 2) << wt::describe_groups(groups, nodes);
  EXPECT_LE(forward_groups, 4) << wt::describe_groups(groups, nodes);
}

// Waterwave's rounds (issue 20 proof 3): after each job's two solo steps (warm-up, profile), the
// jobs' node groups run pair by pair, memory synchronised at each boundary, and each job still
// trains bitwise what it trains alone, on the host and on the strict device.
TEST(JobsOnOneRank, TwoJobsInPairedRoundsTrainAsTheyDoAlone) {
  wt::MpiCommunicator comm(MPI_COMM_WORLD);
  const TwoDecks decks("paired", comm);
  const int64_t steps = 5;
  const auto alone_mlp = train_together({decks.mlp}, "_alone", comm, steps);
  const auto alone_lenet = train_together({decks.lenet}, "_alone", comm, steps);
  for (const wt::DeviceKind kind : {wt::DeviceKind::Host, wt::DeviceKind::Strict}) {
    SCOPED_TRACE(wt::device_kind_name(kind));
    wt::PairedRounds pairs({}, 400'000);  // lenet's forward keeps about 2.7 MB: several groups
    std::vector<std::pair<int, int>> issued;
    Sharing sharing{false, &pairs, kind, 1, &issued};
    const auto together = train_together({decks.mlp, decks.lenet},
                                         std::string("_paired_") + wt::device_kind_name(kind), comm,
                                         steps, nullptr, sharing);
    ASSERT_EQ(together.size(), 2u);
    EXPECT_EQ(together[0], alone_mlp[0]);
    EXPECT_EQ(together[1], alone_lenet[0]);
    // The last step ran in pairs: the jobs alternate many times inside it (taking turns by whole
    // steps, they would alternate once).
    int switches = 0;
    for (size_t i = issued.size() * 3 / 4 + 1; i < issued.size(); ++i)
      switches += issued[i].first != issued[i - 1].first;
    EXPECT_GT(switches, 4);
    // lenet's step in several groups, mlp's in fewer: real pairs, not one group each.
    const auto lenet_groups = pairs.groups(1), mlp_groups = pairs.groups(0);
    const int lenet_nodes = lenet_groups.back().pass_end / 2,
              mlp_nodes = mlp_groups.back().pass_end / 2;
    EXPECT_GE(lenet_groups.size(), 4u) << wt::describe_groups(lenet_groups, lenet_nodes);
    EXPECT_LT(mlp_groups.size(), lenet_groups.size()) << wt::describe_groups(mlp_groups, mlp_nodes);
    if (kind == wt::DeviceKind::Host && comm.rank() == 0)
      std::printf("lenet's node groups: %s\nmlp's: %s\n",
                  wt::describe_groups(lenet_groups, lenet_nodes).c_str(),
                  wt::describe_groups(mlp_groups, mlp_nodes).c_str());
  }
}

}  // namespace

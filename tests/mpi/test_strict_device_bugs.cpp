// The strict device catches the ordering bugs that the host device hides, on 2 real MPI ranks:
//   - a Wait removed from a program: ticktock's second wave (stream 1) waits for the first
//     wave's kept gradient (event 2, recorded after stream 0's KeepGradient) before mixing it in.
//     The host executor happens to run stream 0 first and trains the same model without it; the
//     strict device's race detector refuses the unordered read of the kept gradient.
//   - a host read of device data: reading trained weights without a staged copy.
// Both devices train bitwise the same model from the intact program.
#include <gtest/gtest.h>
#include <mpi.h>

#include <string>
#include <vector>

#include "comm/mpi_communicator.hpp"
#include "deck/run_config.hpp"
#include "device/device_context.hpp"
#include "exec/executor.hpp"
#include "exec/schedule_input.hpp"
#include "model/model.hpp"
#include "sched/schedule_registry.hpp"
#include "synthetic_source.hpp"

namespace {

using Weights = std::vector<float>;

// Removes stream 1's Wait right before its KeepGradient (the wait for the other wave's kept
// gradient) from every rank's program.
void remove_cross_wave_wait(wt::Program& program) {
  for (wt::RankProgram& rank : program.ranks) {
    auto& stream = rank.streams.at(1);
    for (size_t i = 0; i + 1 < stream.size(); ++i)
      if (stream[i].op == wt::OpCode::Wait && stream[i + 1].op == wt::OpCode::KeepGradient) {
        stream.erase(stream.begin() + static_cast<std::ptrdiff_t>(i));
        return;
      }
    FAIL() << "ticktock's program has no Wait before stream 1's KeepGradient";
  }
}

// Both waves' weights after `steps` ticktock steps of mlp on `device`.
Weights train_ticktock(wt::DeviceContext& device, bool without_wait, int steps = 3,
                       MPI_Comm world = MPI_COMM_WORLD) {
  const std::string file = std::string(WT_SOURCE_DIR) + "/models/mlp.toml";
  wt::MpiCommunicator comm(world);
  wt::Model tick(wt::Graph::load(file), device.allocator());
  wt::Model tock(wt::Graph::load(file), device.allocator());
  tick.init(42);
  tock.init(42);
  wt::RunConfig cfg;
  cfg.schedule.kind = "ticktock";
  cfg.train.global_batch = 64;
  cfg.optimizer.kind = "sgd";
  auto opt = wt::make_optimizer(cfg.optimizer, device);
  wt::testing::SyntheticSource source(tick.graph.input_shape, tick.graph.classes, 64, 5,
                                      device.allocator());
  wt::Program program = wt::ScheduleRegistry::generate(
      "ticktock", wt::make_schedule_input(tick, cfg.schedule, cfg.train.global_batch, comm.size()));
  if (without_wait) remove_cross_wave_wait(program);
  wt::Executor exec(device, tick, comm, *opt, source, program, 42, {&tock});
  for (int k = 0; k < steps; ++k) exec.run_step(k, 0.1);
  Weights w = tick.stages[0].values.to_host();
  const Weights w2 = tock.stages[0].values.to_host();
  w.insert(w.end(), w2.begin(), w2.end());
  return w;
}

}  // namespace

TEST(StrictDevice, CatchesARemovedWaitThatTheHostDeviceHides) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  wt::DeviceContext host;
  const Weights reference = train_ticktock(host, false);
  EXPECT_EQ(train_ticktock(host, true), reference) << "the host device hides the missing Wait";
  int caught = 0;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    wt::DeviceContext intact(0, wt::DeviceKind::Strict, seed + 100 * rank);
    EXPECT_EQ(train_ticktock(intact, false), reference)
        << "seed " << seed << ": the strict device must train bitwise the same model";
    // The broken program on each rank alone (a rank that stops at the error must not leave
    // its peer in a collective): the race detector refuses it on every seed, naming both sides.
    wt::DeviceContext broken(0, wt::DeviceKind::Strict, seed + 100 * rank);
    try {
      train_ticktock(broken, true, 3, MPI_COMM_SELF);
    } catch (const wt::OrderingError& e) {
      ++caught;
      EXPECT_NE(std::string(e.what()).find("add_kept_grad"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(caught, 8) << "the strict device must refuse the missing Wait on every seed";
}

TEST(StrictDevice, CatchesAHostReadOfDeviceData) {
  const std::string file = std::string(WT_SOURCE_DIR) + "/models/mlp.toml";
  for (const wt::DeviceKind kind : {wt::DeviceKind::Host, wt::DeviceKind::Strict}) {
    wt::DeviceContext device(0, kind, 1);
    wt::Model model(wt::Graph::load(file), device.allocator());
    model.init(42);
    const wt::Tensor& weights = model.stages[0].values;
    if (kind == wt::DeviceKind::Host) {
      EXPECT_NO_THROW((void)weights.data()[0]) << "the host device lets it pass";
      continue;
    }
    try {
      (void)weights.data()[0];
      ADD_FAILURE() << "a host read of device data must fail on the strict device";
    } catch (const wt::HostAccessError& e) {
      EXPECT_NE(std::string(e.what()).find("parameter values of the stage of nodes 0.."),
                std::string::npos)
          << e.what();
    }
    EXPECT_EQ(weights.to_host().size(), size_t(weights.numel())) << "a staged copy works";
  }
}

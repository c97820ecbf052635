// The stall detector's parts on 2 real ranks: WatchedCommunicator publishes a request on the
// node-shared HeartbeatBoard from its start until it completes, and the watchdog's report names a
// peer that is not in the collective as late, with its pid and step, but not one that is in it.
#include <gtest/gtest.h>
#include <mpi.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "comm/heartbeat_board.hpp"
#include "comm/mpi_communicator.hpp"
#include "comm/stall_watchdog.hpp"
#include "comm/watched_communicator.hpp"
#include "deck/run_config.hpp"
#include "io/checkpoint_file.hpp"
#include "model/model.hpp"
#include "test_memory.hpp"

namespace {

// A rank's board, its watched communicator and a watchdog that never fires during a test (its
// reports are asked for directly), made once the test knows it runs on 2 ranks.
struct Watched {
  explicit Watched(wt::MpiCommunicator& mpi)
      : board(mpi.world()), comm(mpi, board), watchdog(board, comm, 1000) {}
  wt::HeartbeatBoard board;
  wt::WatchedCommunicator comm;
  wt::StallWatchdog watchdog;
};

int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

TEST(StallDetector, RequestIsMarkedUntilItCompletes) {
  wt::MpiCommunicator mpi(MPI_COMM_WORLD);
  if (mpi.size() != 2) GTEST_SKIP() << "needs 2 ranks";
  wt::HeartbeatBoard board(mpi.world());
  wt::WatchedCommunicator comm(mpi, board);
  const int me = world_rank(), peer = 1 - me;
  comm.set_step(41);
  float x[4] = {1, 2, 3, float(me)};
  std::unique_ptr<wt::CommRequest> req;
  if (me == 0) req = comm.iallreduce_sum(x, 4, 0);
  MPI_Barrier(MPI_COMM_WORLD);  // rank 0's request is published before rank 1 looks
  wt::Heartbeat h;
  ASSERT_TRUE(board.find(0, &h));
  EXPECT_EQ(h.op, wt::CommOp::Iallreduce);
  EXPECT_EQ(h.group, 0);
  EXPECT_EQ(h.seq, 1);
  EXPECT_EQ(h.step, 41);
  ASSERT_TRUE(board.find(1, &h));
  EXPECT_EQ(h.op, wt::CommOp::None);
  // Both ranks have looked before rank 1 posts: otherwise rank 0 could see rank 1's mark already.
  MPI_Barrier(MPI_COMM_WORLD);
  if (me == 1) req = comm.iallreduce_sum(x, 4, 0);
  req->wait();
  EXPECT_EQ(x[3], 1.0f);
  EXPECT_EQ(board.own().op, wt::CommOp::None);
  MPI_Barrier(MPI_COMM_WORLD);
  ASSERT_TRUE(board.find(peer, &h));
  EXPECT_EQ(h.op, wt::CommOp::None);
  EXPECT_EQ(h.pid > 0, true);
  // Both ranks have looked before either enters the barrier below, which marks the board again.
  MPI_Barrier(MPI_COMM_WORLD);
  // A blocking call leaves the mark cleared too, and counts as the next collective.
  comm.barrier();
  EXPECT_EQ(board.own().op, wt::CommOp::None);
  EXPECT_GE(board.own().progress_ns, h.progress_ns - 1);
}

TEST(StallDetector, ReportNamesPeerNotInTheCollective) {
  wt::MpiCommunicator mpi(MPI_COMM_WORLD);
  if (mpi.size() != 2) GTEST_SKIP() << "needs 2 ranks";
  Watched w(mpi);
  const int me = world_rank();
  w.comm.set_step(6);  // the report counts steps from 1
  int peer_pid = 0;
  const int my_pid = ::getpid();
  MPI_Sendrecv(&my_pid, 1, MPI_INT, 1 - me, 0, &peer_pid, 1, MPI_INT, 1 - me, 0, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  // Rank 0 claims to wait in allreduce #7 of the world group; rank 1 is computing.
  if (me == 0) w.board.enter(wt::CommOp::Allreduce, 0, 7, wt::monotonic_ns());
  MPI_Barrier(MPI_COMM_WORLD);
  if (me == 0) {
    const std::string report = w.watchdog.describe_stall(w.board.own(), wt::monotonic_ns());
    EXPECT_NE(report.find("wavetrain: rank 0: stalled: waited"), std::string::npos) << report;
    EXPECT_NE(report.find("in allreduce (group 0, collective #7) at step 7"), std::string::npos)
        << report;
    EXPECT_NE(report.find("late: rank 1 (pid " + std::to_string(peer_pid) +
                          "): in compute, last progress at step 7"),
              std::string::npos)
        << report;
  }
  MPI_Barrier(MPI_COMM_WORLD);
  // Now rank 1 is in the same collective: nobody on the node is late.
  if (me == 1) w.board.enter(wt::CommOp::Allreduce, 0, 7, wt::monotonic_ns());
  MPI_Barrier(MPI_COMM_WORLD);
  if (me == 0) {
    const std::string report = w.watchdog.describe_stall(w.board.own(), wt::monotonic_ns());
    EXPECT_EQ(report.find("late:"), std::string::npos) << report;
    EXPECT_NE(report.find("no rank on this node is late (ranks 1 wait in the same call)"),
              std::string::npos)
        << report;
  }
  MPI_Barrier(MPI_COMM_WORLD);  // rank 1 stays in the call until rank 0 has looked
  w.board.leave();
}

// Rank 0's slot once it shows `op` (20 s at most), and 200 ms more of rank 0 waiting in it.
wt::Heartbeat rank0_marked(wt::HeartbeatBoard& board, wt::CommOp op) {
  wt::Heartbeat h;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while ((!board.find(0, &h) || h.op != op) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(h.op, op);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  return h;
}

// A checkpoint write's collectives are HDF5's and MPI-IO's, on the raw MPI communicator: the
// region mark puts them on the board. Rank 0 starts a real collective write and is held in it
// while rank 1 has not joined; rank 1 (a peer's view, as its watchdog would have) sees rank 0
// marked "checkpoint write", and the report names rank 1 as the late one. Then rank 1 joins.
TEST(StallDetector, CheckpointWriteIsWatched) {
  wt::MpiCommunicator mpi(MPI_COMM_WORLD);
  if (mpi.size() != 2) GTEST_SKIP() << "needs 2 ranks";
  Watched w(mpi);
  const int me = world_rank();
  w.comm.set_step(2);
  wt::Model model(wt::Graph::load(std::string(WT_SOURCE_DIR) + "/models/mlp.toml"),
                  wt::testing::memory());
  model.init(1);
  auto opt = wt::make_optimizer(wt::RunConfig::Optimizer{}, wt::testing::device());
  wt::CheckpointInfo info;
  info.model = model.graph.name;
  info.optimizer = "sgd";
  char name[] = "/tmp/wt-watch-XXXXXX";
  if (me == 0 && !mkdtemp(name)) name[0] = 0;
  MPI_Bcast(name, sizeof name, MPI_CHAR, 0, MPI_COMM_WORLD);
  const std::string path = std::string(name) + "/step_00000002.h5";
  auto write = [&] {
    auto mark = w.comm.watch_region(wt::CommRegion::CheckpointWrite);
    wt::write_checkpoint(path, info, model, *opt, {0}, MPI_COMM_WORLD);
  };
  if (me == 0) {
    EXPECT_EQ(w.board.own().op, wt::CommOp::None);
    write();
  } else {
    const wt::Heartbeat h = rank0_marked(w.board, wt::CommOp::CheckpointWrite);
    const std::string report = w.watchdog.describe_stall(h, wt::monotonic_ns());
    EXPECT_NE(report.find("rank 0: stalled: waited "), std::string::npos) << report;
    EXPECT_NE(report.find("in checkpoint write (group 0, collective #1) at step 3"),
              std::string::npos)
        << report;
    EXPECT_NE(report.find("late: rank 1 (pid " + std::to_string(::getpid()) + "): in compute"),
              std::string::npos)
        << report;
    write();
  }
  EXPECT_EQ(w.board.own().op, wt::CommOp::None);  // the mark ends with the region
  MPI_Barrier(MPI_COMM_WORLD);
  if (me == 0) std::filesystem::remove_all(name);
}

// A whole-step graph's NCCL calls run inside the graph, unseen by the communicator; the host waits
// for them in the step's read-back, which the executor marks as a region (executor_step.cpp). Rank
// 0 enters the region and waits (a raw receive stands in for the synchronisation a peer's
// collective holds up); rank 1, the late one, sees it marked and the report names the graphed step.
TEST(StallDetector, GraphedStepIsWatched) {
  wt::MpiCommunicator mpi(MPI_COMM_WORLD);
  if (mpi.size() != 2) GTEST_SKIP() << "needs 2 ranks";
  Watched w(mpi);
  const int me = world_rank();
  w.comm.set_step(4);
  int token = 0;
  if (me == 0) {
    auto mark = w.comm.watch_region(wt::CommRegion::GraphedStep);
    MPI_Recv(&token, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else {
    const wt::Heartbeat h = rank0_marked(w.board, wt::CommOp::GraphedStep);
    const std::string report = w.watchdog.describe_stall(h, wt::monotonic_ns());
    EXPECT_NE(report.find("in graphed step's collectives (group 0, collective #1) at step 5"),
              std::string::npos)
        << report;
    EXPECT_NE(report.find("late: rank 1 (pid " + std::to_string(::getpid()) + "): in compute"),
              std::string::npos)
        << report;
    MPI_Send(&token, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
  }
  EXPECT_EQ(w.board.own().op, wt::CommOp::None);  // the mark ends with the region
  MPI_Barrier(MPI_COMM_WORLD);
}

}  // namespace

// agree_on_failure on 2 real ranks: a failure of local work on one rank becomes the same
// AgreedError on every rank (its status, the lowest failing rank's message) instead of leaving
// the other rank in the next collective; no failure, no error. And the watchdog's silence: a
// rank marked failed on the heartbeat board is visible to its node's peers.
#include <gtest/gtest.h>
#include <mpi.h>

#include <stdexcept>
#include <string>

#include "comm/failure_agreement.hpp"
#include "comm/heartbeat_board.hpp"
#include "comm/mpi_communicator.hpp"
#include "mem/caching_allocator.hpp"
#include "util/agreed_error.hpp"
#include "util/input_error.hpp"

namespace {

// Runs agree_on_failure; returns {status, message} of the AgreedError, or {0, ""}.
std::pair<int, std::string> agree(wt::Communicator& comm, const std::function<void()>& work) {
  try {
    wt::agree_on_failure(comm, work);
  } catch (const wt::AgreedError& e) {
    return {e.status(), e.what()};
  }
  return {0, ""};
}

TEST(FailureAgreement, NoFailureNoError) {
  wt::MpiCommunicator comm(MPI_COMM_WORLD);
  EXPECT_EQ(agree(comm, [] {}).first, 0);
}

TEST(FailureAgreement, OneRanksBadInputEndsEveryRankWithItsMessage) {
  wt::MpiCommunicator comm(MPI_COMM_WORLD);
  if (comm.size() != 2) GTEST_SKIP() << "needs 2 ranks";
  const auto [status, message] = agree(comm, [&] {
    if (comm.rank() == 1) throw wt::InputError("runs/x", 0, "run directory", "only rank 1 sees it");
  });
  EXPECT_EQ(status, 2);
  EXPECT_EQ(message, "wavetrain: error: runs/x: run directory: only rank 1 sees it");
}

TEST(FailureAgreement, LowestFailingRankIsReported) {
  wt::MpiCommunicator comm(MPI_COMM_WORLD);
  if (comm.size() != 2) GTEST_SKIP() << "needs 2 ranks";
  const auto [status, message] = agree(comm, [&] {
    if (comm.rank() == 0) throw wt::OutOfMemory(1 << 20, 0, 1024);
    throw std::runtime_error("rank 1's own error");
  });
  EXPECT_EQ(status, 3);
  EXPECT_NE(message.find("wavetrain: rank 0: "), std::string::npos) << message;
}

TEST(FailureAgreement, StatusOfEachKind) {
  EXPECT_EQ(wt::failure_status(wt::InputError("f", 1, "k", "m")), 2);
  EXPECT_EQ(wt::failure_status(wt::OutOfMemory(10, 0, 5)), 3);
  EXPECT_EQ(wt::failure_status(std::bad_alloc()), 3);
  EXPECT_EQ(wt::failure_status(wt::AgreedError(75, "x")), 75);
  EXPECT_EQ(wt::failure_status(std::runtime_error("x")), 1);
  EXPECT_EQ(wt::failure_line(std::runtime_error("disk"), 3), "wavetrain: rank 3: error: disk");
}

TEST(FailureAgreement, FailedRankIsVisibleOnTheBoard) {
  wt::MpiCommunicator comm(MPI_COMM_WORLD);
  if (comm.size() != 2) GTEST_SKIP() << "needs 2 ranks";
  wt::HeartbeatBoard board(comm.world());
  if (comm.rank() == 1) board.mark_failed();
  MPI_Barrier(MPI_COMM_WORLD);
  wt::Heartbeat h;
  ASSERT_TRUE(board.find(1, &h));
  EXPECT_TRUE(h.failed);
  EXPECT_TRUE(h.finished);  // its process ending is not a lost peer either
  ASSERT_TRUE(board.find(0, &h));
  EXPECT_FALSE(h.failed);
  MPI_Barrier(MPI_COMM_WORLD);
}

}  // namespace

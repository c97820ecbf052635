// No type that wraps an MPI resource may release it collectively while an exception unwinds
// (util/unwinding.hpp): the error may be one rank's alone, and its peers, waiting in the step's
// receive or broadcast, would never join the release, so the failing rank would hang instead of
// reporting. For each such type, rank 0 destroys its object while an exception is in flight and
// rank 1 keeps its own; rank 1 then waits, with a deadline, for rank 0 to say it got out. A
// destructor that entered a collective never gets out: rank 1 names the type and aborts the job.
//
// The detector itself is shown to work on a destructor that does enter a collective (rank 1 then
// joins it late, so that case ends). tests/lint/unwinding.py makes sure every type whose
// destructor releases an MPI or NCCL resource is named here. NcclCommunicator (ncclCommAbort
// while unwinding) needs a GPU: tests/cuda/cuda_check.cpp destroys one while unwinding, times
// it and makes a new one after it (tools/gpu-check.sh).
#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "app/stall_watch.hpp"
#include "comm/heartbeat_board.hpp"
#include "comm/mpi_communicator.hpp"
#include "comm/shm_allreduce.hpp"
#include "comm/shm_point_to_point.hpp"
#include "comm/watched_communicator.hpp"
#include "util/unwinding.hpp"

namespace {

constexpr int kReleasedTag = 7301;
constexpr double kDeadlineSeconds = 20;  // a local release takes microseconds

int world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

// Runs `drop` from a destructor while an exception unwinds the stack, as a real error would.
void drop_while_unwinding(const std::function<void()>& drop) {
  struct DropOnExit {
    const std::function<void()>& drop;
    ~DropOnExit() {
      EXPECT_TRUE(wt::exception_unwinding());
      drop();
    }
  };
  try {
    DropOnExit on_exit{drop};
    throw std::runtime_error("an error on this rank alone");
  } catch (const std::runtime_error&) {
  }
}

// Rank 0 drops its object while unwinding; rank 1 waits for word that it got out. Returns (on
// both ranks) whether it did within `deadline_s`. Past the deadline rank 1 calls `rescue` (which
// must let rank 0 out) or, without one, names `type` and aborts: a bounded failure, never a hang.
bool rank0_released_alone(const std::string& type, const std::function<void()>& drop_on_rank0,
                          double deadline_s, const std::function<void()>& rescue = nullptr) {
  int in_time = 1;
  if (world_rank() == 0) {
    drop_while_unwinding(drop_on_rank0);
    MPI_Send(&in_time, 1, MPI_INT, 1, kReleasedTag, MPI_COMM_WORLD);
  } else {
    int got = 0;
    MPI_Request request;
    MPI_Irecv(&got, 1, MPI_INT, 0, kReleasedTag, MPI_COMM_WORLD, &request);
    const auto start = std::chrono::steady_clock::now();
    int done = 0;
    while (!done) {
      MPI_Test(&request, &done, MPI_STATUS_IGNORE);
      const double waited =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (!done && waited > deadline_s) break;
    }
    if (!done) {
      in_time = 0;
      if (!rescue) {
        std::fprintf(stderr,
                     "FAIL: ~%s on rank 0 did not return within %.0f s while an exception "
                     "unwound it: it waits for a rank that is not releasing it (a collective "
                     "release on an error path; see src/util/unwinding.hpp)\n",
                     type.c_str(), deadline_s);
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
      rescue();
      MPI_Wait(&request, MPI_STATUS_IGNORE);
    }
  }
  MPI_Bcast(&in_time, 1, MPI_INT, 1, MPI_COMM_WORLD);
  return in_time != 0;
}

class UnwindingRelease : public ::testing::Test {
 protected:
  void SetUp() override {
    int size = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) GTEST_SKIP() << "needs exactly 2 ranks";
  }
};

// The detector catches the class of bug: a destructor that enters a collective (MPI_Barrier
// here) on the unwinding rank does not get out until rank 1 joins it.
TEST_F(UnwindingRelease, DetectorCatchesADestructorThatEntersACollective) {
  struct CollectiveOnDestroy {
    ~CollectiveOnDestroy() { MPI_Barrier(MPI_COMM_WORLD); }
  };
  auto object = std::make_unique<CollectiveOnDestroy>();
  const bool in_time = rank0_released_alone(
      "CollectiveOnDestroy", [&] { object.reset(); }, 2.0, [] { MPI_Barrier(MPI_COMM_WORLD); });
  EXPECT_FALSE(in_time) << "the detector missed a collective in a destructor";
  if (world_rank() == 1) object.release();  // its barrier was the rescue: nothing left to join
}

TEST_F(UnwindingRelease, HeartbeatBoardFreesItsWindowOnlyWhenNotUnwinding) {
  auto board = std::make_unique<wt::HeartbeatBoard>(MPI_COMM_WORLD);
  EXPECT_TRUE(rank0_released_alone(
      "HeartbeatBoard", [&] { board.reset(); }, kDeadlineSeconds));
  if (world_rank() == 1) drop_while_unwinding([&] { board.reset(); });
}

TEST_F(UnwindingRelease, ShmAllreduceFreesItsWindowOnlyWhenNotUnwinding) {
  auto shm = wt::ShmAllreduce::create(MPI_COMM_WORLD);
  ASSERT_NE(shm, nullptr);
  std::vector<float> values(5000, 1.0f);
  shm->sum(values.data(), int64_t(values.size()));  // allocates the shared window
  ASSERT_EQ(values[0], 2.0f);
  EXPECT_TRUE(rank0_released_alone(
      "ShmAllreduce", [&] { shm.reset(); }, kDeadlineSeconds));
  if (world_rank() == 1) drop_while_unwinding([&] { shm.reset(); });
}

TEST_F(UnwindingRelease, ShmPointToPointFreesItsWindowOnlyWhenNotUnwinding) {
  auto channel = wt::ShmPointToPoint::create(MPI_COMM_WORLD, 1 << 20);
  ASSERT_NE(channel, nullptr);
  ASSERT_TRUE(channel->reaches(1 - world_rank()));
  EXPECT_TRUE(rank0_released_alone(
      "ShmPointToPoint", [&] { channel.reset(); }, kDeadlineSeconds));
  if (world_rank() == 1) drop_while_unwinding([&] { channel.reset(); });
}

TEST_F(UnwindingRelease, MpiCommunicatorFreesItsGroupsOnlyWhenNotUnwinding) {
  auto comm = std::make_unique<wt::MpiCommunicator>(MPI_COMM_WORLD);
  comm->add_group({0, 1});
  std::vector<float> values(5000, 1.0f);
  comm->allreduce_sum(values.data(), int64_t(values.size()), 1);  // its shared-memory window
  EXPECT_TRUE(rank0_released_alone(
      "MpiCommunicator", [&] { comm.reset(); }, kDeadlineSeconds));
  if (world_rank() == 1) drop_while_unwinding([&] { comm.reset(); });
}

// A receive whose sender never sends (the peer is elsewhere): its request must be withdrawn, not
// waited for: through MPI (MpiRequest), through the node's shared window (ShmReceive) and
// through the stall watch's decorator (WatchedCommunicator's request), as main() wires it.
TEST_F(UnwindingRelease, PendingReceiveIsWithdrawnNotWaitedFor) {
  wt::MpiCommunicator mpi(MPI_COMM_WORLD, /*point_to_point_ring_bytes=*/0);
  wt::MpiCommunicator shm(MPI_COMM_WORLD);
  ASSERT_EQ(mpi.shared_memory_point_to_point(), nullptr);
  ASSERT_NE(shm.shared_memory_point_to_point(), nullptr);
  wt::StallWatch watch(mpi, mpi, 600);
  float landing[4] = {0, 0, 0, 0};
  std::unique_ptr<wt::CommRequest> plain, through_window, watched;
  if (world_rank() == 0) {
    plain = mpi.irecv(landing, 4, 1, 11);
    through_window = shm.irecv(landing, 4, 1, 11);
    watched = watch.comm().irecv(landing, 4, 1, 12);
  }
  EXPECT_TRUE(rank0_released_alone(
      "MpiRequest", [&] { plain.reset(); }, kDeadlineSeconds));
  EXPECT_TRUE(rank0_released_alone(
      "ShmReceive", [&] { through_window.reset(); }, kDeadlineSeconds));
  EXPECT_TRUE(rank0_released_alone(
      "WatchedCommunicator::Request", [&] { watched.reset(); }, kDeadlineSeconds));
  mpi.barrier();
}

// A send through the shared window dropped while unwinding before it was tested (ShmSend): its
// header's request is given up, not waited for; the message still arrives.
TEST_F(UnwindingRelease, UntestedShmSendIsGivenUpNotWaitedFor) {
  wt::MpiCommunicator shm(MPI_COMM_WORLD);
  float data[4] = {1, 2, 3, 4};
  std::unique_ptr<wt::CommRequest> send;
  if (world_rank() == 0) send = shm.isend(data, 4, 1, 13);
  EXPECT_TRUE(rank0_released_alone(
      "ShmSend", [&] { send.reset(); }, kDeadlineSeconds));
  if (world_rank() == 1) {
    float got[4] = {0, 0, 0, 0};
    shm.irecv(got, 4, 0, 13)->wait();
    EXPECT_EQ(got[3], 4.0f);
  }
  shm.barrier();
}

// A non-blocking allreduce rank 1 has not joined: abandoned while unwinding (MPI forbids
// cancelling it), then completed by rank 1's late call so nothing stays pending.
TEST_F(UnwindingRelease, PendingCollectiveIsAbandonedNotWaitedFor) {
  wt::MpiCommunicator mpi(MPI_COMM_WORLD);
  static float values[8];
  for (float& v : values) v = 1.0f;
  std::unique_ptr<wt::CommRequest> pending;
  if (world_rank() == 0) pending = mpi.iallreduce_sum(values, 8, 0);
  EXPECT_TRUE(rank0_released_alone(
      "MpiRequest (collective)", [&] { pending.reset(); }, kDeadlineSeconds));
  if (world_rank() == 1) {
    mpi.iallreduce_sum(values, 8, 0)->wait();
    EXPECT_EQ(values[0], 2.0f);  // rank 0's abandoned half still took part
  }
  mpi.barrier();
}

// The whole stall watch as main() holds it (board, decorator, watchdog thread).
TEST_F(UnwindingRelease, StallWatchEndsWithoutACollectiveWhenUnwinding) {
  wt::MpiCommunicator mpi(MPI_COMM_WORLD);
  auto watch = std::make_unique<wt::StallWatch>(mpi, mpi, 600);
  EXPECT_TRUE(rank0_released_alone(
      "StallWatch", [&] { watch.reset(); }, kDeadlineSeconds));
  if (world_rank() == 1) drop_while_unwinding([&] { watch.reset(); });
}

}  // namespace

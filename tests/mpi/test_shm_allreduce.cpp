// ShmAllreduce (the communicator's blocking float allreduce on one node) against MPI_Allreduce:
// identical sums on every rank for sizes that split evenly, unevenly and barely, repeated so the
// two alternating buffers and a window that grows are both exercised.
#include <gtest/gtest.h>
#include <mpi.h>
#include <sys/resource.h>

#include <vector>

#include "comm/mpi_communicator.hpp"
#include "comm/shm_allreduce.hpp"

namespace {

std::vector<float> values(int64_t n, int rank, int round) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    v[size_t(i)] = float((i * 7 + rank * 13 + round) % 101) * 0.37f - 11.0f * float(rank);
  return v;
}

TEST(ShmAllreduce, MatchesMpiAllreduceOnEveryRank) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  auto shm = wt::ShmAllreduce::create(MPI_COMM_WORLD);
  if (size < 2) {
    EXPECT_EQ(shm, nullptr);
    return;
  }
  ASSERT_NE(shm, nullptr);  // mpiexec -n 2 on one machine
  int round = 0;
  for (int64_t n :
       {int64_t(1), int64_t(3), int64_t(1000), int64_t(269322), int64_t(5), int64_t(300001)}) {
    for (int repeat = 0; repeat < 3; ++repeat, ++round) {
      std::vector<float> got = values(n, rank, round), want = got;
      MPI_Allreduce(MPI_IN_PLACE, want.data(), int(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      ASSERT_TRUE(shm->sum(got.data(), n));
      if (size == 2) {
        ASSERT_EQ(got, want) << "n " << n;  // a + b is the same sum whatever the algorithm
      } else {
        for (int64_t i = 0; i < n; ++i) ASSERT_NEAR(got[size_t(i)], want[size_t(i)], 1e-3f);
      }
      // Every rank holds the same bits.
      std::vector<float> from_root = got;
      MPI_Bcast(from_root.data(), int(n), MPI_FLOAT, 0, MPI_COMM_WORLD);
      ASSERT_EQ(got, from_root);
    }
  }
}

TEST(ShmAllreduce, CommunicatorUsesItForLargeBlockingSums) {
  wt::MpiCommunicator world(MPI_COMM_WORLD);
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  EXPECT_EQ(world.shared_memory_allreduce(0), size > 1);
  const int64_t n = 50000;
  std::vector<float> got = values(n, world.rank(), 0), want = got;
  MPI_Allreduce(MPI_IN_PLACE, want.data(), int(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  world.allreduce_sum(got.data(), n, 0);
  if (size == 2) {
    EXPECT_EQ(got, want);
  }
}

// A file size limit (ulimit -f) on one rank that the node's window file would pass: sum() says so
// on every rank alike, without summing, and the communicator's allreduce sums through MPI
// instead. (Allocating the window would end the job inside MPI_Win_allocate_shared.)
TEST(ShmAllreduce, AFileSizeLimitOnAnyRankFallsBackToMpi) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2) GTEST_SKIP() << "needs 2 ranks";
  wt::MpiCommunicator comm(MPI_COMM_WORLD);
  auto shm = wt::ShmAllreduce::create(MPI_COMM_WORLD);
  ASSERT_NE(shm, nullptr);
  struct rlimit saved {};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &saved), 0);
  if (rank == 1) {  // 1 MiB: far below a window for 300001 floats per rank
    struct rlimit low = saved;
    low.rlim_cur = 1 << 20;
    ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &low), 0);
  }
  std::vector<float> got = values(300001, rank, 0), want = got;
  MPI_Allreduce(MPI_IN_PLACE, want.data(), int(want.size()), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  std::vector<float> untouched = got;
  EXPECT_FALSE(shm->sum(got.data(), int64_t(got.size()))) << "rank " << rank;
  EXPECT_EQ(got, untouched) << "a refused sum must leave the data alone";
  comm.allreduce_sum(got.data(), int64_t(got.size()), 0);  // its own window: refused the same
  EXPECT_EQ(got, want);
  if (rank == 1) {
    ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &saved), 0);
  }
}

}  // namespace

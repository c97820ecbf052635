// ShmAllreduce (the communicator's blocking float allreduce on one node) against MPI_Allreduce:
// identical sums on every rank for sizes that split evenly, unevenly and barely, repeated so the
// two alternating buffers and a window that grows are both exercised.
#include <gtest/gtest.h>
#include <mpi.h>

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
      shm->sum(got.data(), n);
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

}  // namespace

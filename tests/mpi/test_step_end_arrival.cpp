// The multiplexer's step-end arrival (app/background/step_end_arrival.hpp) on two real ranks:
// what it carries comes back summed (the longest streak, the votes), and a rank that waited
// learns when its peer arrived, by the one clock of this host, exactly as the peer read it.
#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <thread>

#include "app/background/step_end_arrival.hpp"
#include "comm/mpi_communicator.hpp"
#include "util/steady_seconds.hpp"

namespace {

TEST(StepEndArrival, CarriesStreaksVotesAndTheLastPeersArrivalTime) {
  wt::MpiCommunicator comm(MPI_COMM_WORLD);
  const int rank = comm.rank(), size = comm.size();
  // Rank 0 arrives late, so the others find it missing first and learn its time; on a loaded
  // machine a rank may be descheduled past that, so a few tries, each checked either way.
  double learned = 0;  // tries in which a rank other than 0 learned its peer's time
  for (int attempt = 0; attempt < 5 && learned == 0; ++attempt) {
    comm.barrier();
    if (rank == 0) std::this_thread::sleep_for(std::chrono::milliseconds(30));
    wt::StepEndArrival arrival(comm, /*streak=*/rank + 1, /*vote=*/rank == 1 ? 1 : 0);
    while (!arrival.test()) {
    }
    arrival.wait();
    EXPECT_EQ(arrival.longest_streak(), size);
    EXPECT_EQ(arrival.votes(), size > 1 ? 1.0 : 0.0);
    // Every rank's own arrival time, summed in doubles, to check what the floats carried.
    std::vector<double> times(size_t(size), 0.0);
    times[size_t(rank)] = arrival.arrived_at();
    comm.allreduce_sum(times.data(), size, 0);
    double last = -1;
    for (int r = 0; r < size; ++r)
      if (r != rank) last = std::max(last, times[size_t(r)]);
    // Known exactly as the peer read it, or -1 where this rank never found a peer missing.
    const double peer = arrival.last_peer_arrival();
    if (peer != -1.0) {
      EXPECT_NEAR(peer, last, 1e-9);
    }
    double mine = rank != 0 && peer != -1.0 ? 1 : 0;
    comm.allreduce_sum(&mine, 1, 0);
    learned = mine;
  }
  if (size > 1) {
    EXPECT_GT(learned, 0) << "no rank found its late peer missing in 5 tries";
  }
}

TEST(StepEndArrival, APeerTimeOutsideTheSpanOfItsArrivalIsNotTrusted) {
  // A peer on another host reads another clock: shifted by a day here (its time is the
  // arrival's, plus 86400 s), it falls outside [last miss, completion] and reads as unknown.
  wt::MpiCommunicator comm(MPI_COMM_WORLD);
  if (comm.size() < 2) GTEST_SKIP() << "needs two ranks";
  const int rank = comm.rank();
  if (rank == 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  wt::StepEndArrival arrival(comm, 0, 0, /*clock_offset_s=*/rank == 0 ? 86400.0 : 0.0);
  while (!arrival.test()) {
  }
  arrival.wait();
  if (rank != 0) {
    EXPECT_EQ(arrival.last_peer_arrival(), -1.0);
  }
}

}  // namespace

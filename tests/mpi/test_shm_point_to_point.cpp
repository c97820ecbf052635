// ShmPointToPoint (point-to-point messages between ranks of one node through a shared window):
// MPI's matching rules (tags out of order, a receive larger than its message), a full ring
// falling back to MPI without reordering, a clear error for a message larger than its receive,
// and the reason it exists: a send ends while its receiver has not yet posted the receive.
#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <vector>

#include "comm/mpi_communicator.hpp"
#include "comm/shm_point_to_point.hpp"

namespace {

int world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

std::vector<float> message(int64_t n, int which) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[size_t(i)] = float(which * 1000003 + i) * 0.25f;
  return v;
}

TEST(ShmPointToPoint, MatchesByTagAsMpiDoes) {
  auto channel = wt::ShmPointToPoint::create(MPI_COMM_WORLD, 8 << 20);
  ASSERT_NE(channel, nullptr);  // mpiexec -n 2 on one machine
  ASSERT_TRUE(channel->reaches(1 - world_rank()));
  const int64_t sizes[] = {400000, 3, 100};
  const int tags[] = {5, 6, 5};
  if (world_rank() == 0) {
    std::vector<std::vector<float>> sent;
    std::vector<std::unique_ptr<wt::CommRequest>> sends;
    for (int m = 0; m < 3; ++m) {
      sent.push_back(message(sizes[m], m));
      sends.push_back(channel->isend(sent.back().data(), sizes[m], 1, tags[m]));
    }
    for (auto& s : sends) s->wait();
    EXPECT_EQ(channel->sent().through_ring, 3);
    EXPECT_EQ(channel->sent().through_mpi, 0);
  } else {
    // Tag 6 first, then the two tag-5 messages in their order; the last receive has room to
    // spare, as MPI allows.
    std::vector<float> second(3), first(400000), third(500, -1.0f);
    auto r6 = channel->irecv(second.data(), 3, 0, 6);
    r6->wait();
    EXPECT_EQ(second, message(3, 1));
    auto r5a = channel->irecv(first.data(), 400000, 0, 5);
    auto r5b = channel->irecv(third.data(), 500, 0, 5);
    r5b->wait();
    r5a->wait();
    EXPECT_EQ(first, message(400000, 0));
    const std::vector<float> want = message(100, 2);
    EXPECT_TRUE(std::equal(want.begin(), want.end(), third.begin()));
    EXPECT_EQ(third[100], -1.0f);  // past the message: untouched
  }
}

TEST(ShmPointToPoint, AFullRingSendsThroughMpiInOrder) {
  // Each 16 kB message takes a 16 kB + 64 byte region of a 64 kB ring: three fit, the others
  // wait for none of them and go through MPI, as does one larger than the whole ring.
  auto channel = wt::ShmPointToPoint::create(MPI_COMM_WORLD, 64 << 10);
  ASSERT_NE(channel, nullptr);
  const int kMessages = 8;
  auto size_of = [](int m) { return int64_t(m == 5 ? 40000 : 4096); };
  if (world_rank() == 0) {
    std::vector<std::vector<float>> sent;
    std::vector<std::unique_ptr<wt::CommRequest>> sends;
    for (int m = 0; m < kMessages; ++m) {
      sent.push_back(message(size_of(m), m));
      sends.push_back(channel->isend(sent.back().data(), size_of(m), 1, 9));
    }
    MPI_Barrier(MPI_COMM_WORLD);  // only now does rank 1 receive
    for (auto& s : sends) s->wait();
    EXPECT_EQ(channel->sent().through_ring, 3);
    EXPECT_EQ(channel->sent().through_mpi, kMessages - 3);
    // The receiver has consumed everything: the ring takes messages again.
    MPI_Barrier(MPI_COMM_WORLD);
    std::vector<float> again = message(4096, 99);
    channel->isend(again.data(), 4096, 1, 9)->wait();
    EXPECT_EQ(channel->sent().through_ring, 4);
  } else {
    MPI_Barrier(MPI_COMM_WORLD);
    // Posted newest first and completed in reverse, so a receive matched out of order shows.
    std::vector<std::vector<float>> got;
    std::vector<std::unique_ptr<wt::CommRequest>> receives;
    for (int m = 0; m < kMessages; ++m) got.emplace_back(size_t(size_of(m)));
    for (int m = 0; m < kMessages; ++m)
      receives.push_back(channel->irecv(got[size_t(m)].data(), size_of(m), 0, 9));
    for (int m = kMessages - 1; m >= 0; --m) receives[size_t(m)]->wait();
    for (int m = 0; m < kMessages; ++m) EXPECT_EQ(got[size_t(m)], message(size_of(m), m)) << m;
    MPI_Barrier(MPI_COMM_WORLD);
    std::vector<float> again(4096);
    channel->irecv(again.data(), 4096, 0, 9)->wait();
    EXPECT_EQ(again, message(4096, 99));
  }
}

// Both ranks send a message too large for the ring head to head and wait for their sends before
// their receives: MPI's rendezvous completes this because each receive was posted before, and
// the channel's must too (a receive whose floats were only asked for once the caller tested it
// would leave both sends waiting). Bounded: a send not ended in 20 s fails and ends the job.
TEST(ShmPointToPoint, HeadToHeadSendsThroughMpiDoNotWaitForTheirReceivesToBeTested) {
  auto channel = wt::ShmPointToPoint::create(MPI_COMM_WORLD, 64 << 10);
  ASSERT_NE(channel, nullptr);
  const int peer = 1 - world_rank();
  const int64_t n = 750000;  // 3 MB, past any eager limit and the 64 kB ring
  std::vector<float> out = message(n, world_rank()), in(static_cast<size_t>(n));
  auto receive = channel->irecv(in.data(), n, peer, 21);
  auto send = channel->isend(out.data(), n, peer, 21);
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  bool ended = false;
  while (!(ended = send->test()) && std::chrono::steady_clock::now() < give_up) {
  }
  if (!ended) {
    std::fprintf(stderr,
                 "FAIL: rank %d's send through MPI waited 20 s for a receive posted "
                 "before it\n",
                 world_rank());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  receive->wait();
  EXPECT_EQ(in, message(n, peer));
  EXPECT_EQ(channel->sent().through_mpi, 1);
}

TEST(ShmPointToPoint, AMessageLargerThanItsReceiveIsAClearError) {
  auto channel = wt::ShmPointToPoint::create(MPI_COMM_WORLD, 1 << 20);
  ASSERT_NE(channel, nullptr);
  if (world_rank() == 0) {
    std::vector<float> data = message(1000, 0);
    channel->isend(data.data(), 1000, 1, 3)->wait();
  } else {
    std::vector<float> small(10);
    auto receive = channel->irecv(small.data(), 10, 0, 3);
    try {
      receive->wait();
      ADD_FAILURE() << "a 1000-float message into a 10-float receive was accepted";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(),
                   "a message of 1000 floats from rank 0 (tag 3) does not fit its receive of 10");
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// The point of the channel: Open MPI without single copy sends a 1.6 MB message as a rendezvous
// that needs the receiver inside MPI, so a receiver busy computing holds the sender. Here rank 1
// posts its receive only after rank 0 says whether its send ended on its own.
TEST(ShmPointToPoint, ASendEndsBeforeItsReceiveIsPosted) {
  wt::MpiCommunicator world(MPI_COMM_WORLD);
  ASSERT_NE(world.shared_memory_point_to_point(), nullptr);
  const int64_t n = 400000;  // 1.6 MB: far past any eager limit
  int ended = 0;
  if (world.rank() == 0) {
    std::vector<float> data = message(n, 7);
    auto send = world.isend(data.data(), n, 1, 11);
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!(ended = send->test()) && std::chrono::steady_clock::now() < give_up) {
    }
    MPI_Send(&ended, 1, MPI_INT, 1, 12, MPI_COMM_WORLD);
    send->wait();
    EXPECT_TRUE(ended) << "the send waited for its receiver";
  } else {
    MPI_Recv(&ended, 1, MPI_INT, 0, 12, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    std::vector<float> got(static_cast<size_t>(n));
    world.irecv(got.data(), n, 0, 11)->wait();
    EXPECT_EQ(got, message(n, 7));
  }
}

}  // namespace

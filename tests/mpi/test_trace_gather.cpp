// gather_rank_traces under real MPI: every rank's records, of different counts (one rank with
// none), arrive on the root intact and in rank order; other ranks get nothing.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstring>
#include <string>

#include "io/trace_gather.hpp"

namespace wt {
namespace {

// Rank r holds r + 2 events, r + 1 steps and 3 * r memory samples, values derived from r.
RankTrace trace_of_rank(int r) {
  RankTrace t;
  t.rank = r;
  for (int i = 0; i < r + 2; ++i) {
    TraceEvent e{};
    const std::string name = "Op" + std::to_string(r % 100) + "_" + std::to_string(i % 100);
    std::memcpy(e.name, name.data(), name.size());
    e.stage = r;
    e.batch = i;
    e.wave = -r;
    e.stream = i % 2;
    e.step = 100 + i;
    e.begin = r + 0.25 * i;
    e.end = r + 0.25 * i + 0.125;
    e.bytes = int64_t(1) << (32 + r);  // needs all 64 bits
    t.events.push_back(e);
  }
  for (int i = 0; i < r + 1; ++i) t.steps.push_back({100 + i, r + 1.0 * i, r + 1.0 * i + 0.5});
  for (int i = 0; i < 3 * r; ++i) t.memory.push_back({0.5 * i, 1000 * r + i, 5000 * r});
  return t;
}

TEST(TraceGather, EveryRankArrivesIntactOnTheRoot) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int root = 0; root < size; ++root) {
    const std::vector<RankTrace> got =
        gather_rank_traces(trace_of_rank(rank), MPI_COMM_WORLD, root);
    if (rank != root) {
      EXPECT_TRUE(got.empty());
      continue;
    }
    ASSERT_EQ(int(got.size()), size);
    for (int r = 0; r < size; ++r) {
      const RankTrace want = trace_of_rank(r);
      EXPECT_EQ(got[r].rank, r);
      ASSERT_EQ(got[r].events.size(), want.events.size());
      ASSERT_EQ(got[r].steps.size(), want.steps.size());
      ASSERT_EQ(got[r].memory.size(), want.memory.size());
      for (size_t i = 0; i < want.events.size(); ++i) {
        const TraceEvent &a = got[r].events[i], &b = want.events[i];
        EXPECT_EQ(std::memcmp(a.name, b.name, kTraceNameBytes), 0);
        EXPECT_EQ(a.stage, b.stage);
        EXPECT_EQ(a.batch, b.batch);
        EXPECT_EQ(a.wave, b.wave);
        EXPECT_EQ(a.stream, b.stream);
        EXPECT_EQ(a.step, b.step);
        EXPECT_EQ(a.begin, b.begin);
        EXPECT_EQ(a.end, b.end);
        EXPECT_EQ(a.bytes, b.bytes);
      }
      for (size_t i = 0; i < want.steps.size(); ++i) {
        EXPECT_EQ(got[r].steps[i].step, want.steps[i].step);
        EXPECT_EQ(got[r].steps[i].begin, want.steps[i].begin);
        EXPECT_EQ(got[r].steps[i].end, want.steps[i].end);
      }
      for (size_t i = 0; i < want.memory.size(); ++i) {
        EXPECT_EQ(got[r].memory[i].time, want.memory[i].time);
        EXPECT_EQ(got[r].memory[i].in_use, want.memory[i].in_use);
        EXPECT_EQ(got[r].memory[i].reserved, want.memory[i].reserved);
      }
    }
  }
}

}  // namespace
}  // namespace wt

// DeepPool's sticky sample layout (sched/burst_layout.hpp): the research notes' worked example,
// and over random chains of rank counts every sample on exactly one rank, B/g per rank, and the
// transfers taking each layout to the next.
#include <gtest/gtest.h>

#include <random>

#include "sched/burst_layout.hpp"

namespace {

using Samples = std::vector<std::vector<int64_t>>;

TEST(BurstLayout, ReproducesDeepPoolsExample) {
  // B = 8 on 4 ranks, then 2, then 4 again.
  const wt::SampleLayout four = wt::contiguous_layout(8, 4);
  EXPECT_EQ(four.samples, (Samples{{0, 1}, {2, 3}, {4, 5}, {6, 7}}));
  const wt::SampleLayout two = wt::sticky_layout(four, 2);
  EXPECT_EQ(two.samples, (Samples{{0, 1, 6, 7}, {2, 3, 4, 5}}));
  const wt::SampleLayout back = wt::sticky_layout(two, 4);
  EXPECT_EQ(back.samples, (Samples{{0, 1}, {2, 3}, {4, 5}, {6, 7}}));
  // The runs from 2 to 4 ranks: 0->0 {0,1}, 1->1 {2,3}, 1->2 {4,5}, 0->3 {6,7}.
  const std::vector<wt::RowRun> runs = wt::layout_transfers(two, back);
  ASSERT_EQ(runs.size(), 4u);
  const int expect[4][4] = {{0, 0, 0, 2}, {1, 1, 2, 2}, {1, 2, 4, 2}, {0, 3, 6, 2}};
  for (size_t k = 0; k < 4; ++k) {
    EXPECT_EQ(runs[k].from_rank, expect[k][0]) << k;
    EXPECT_EQ(runs[k].to_rank, expect[k][1]) << k;
    EXPECT_EQ(runs[k].first_sample, expect[k][2]) << k;
    EXPECT_EQ(runs[k].count, expect[k][3]) << k;
  }
  EXPECT_EQ(runs[3].from_row, 2) << "samples 6 and 7 are rank 0's rows 2 and 3";
  EXPECT_EQ(runs[3].to_row, 0);
}

TEST(BurstLayout, RejectsABatchThatDoesNotDivide) {
  EXPECT_THROW(wt::contiguous_layout(10, 4), std::invalid_argument);
  EXPECT_THROW(wt::sticky_layout(wt::contiguous_layout(8, 2), 3), std::invalid_argument);
}

// Applies the runs to `from`'s rows (each sample's index as its value) and returns the rows each
// rank of `to` ends up with.
Samples apply(const wt::SampleLayout& from, const std::vector<wt::RowRun>& runs, int to_ranks,
              int64_t per_rank) {
  Samples rows(size_t(to_ranks), std::vector<int64_t>(size_t(per_rank), -1));
  for (const wt::RowRun& run : runs)
    for (int64_t k = 0; k < run.count; ++k)
      rows[size_t(run.to_rank)][size_t(run.to_row + k)] =
          from.samples[size_t(run.from_rank)][size_t(run.from_row + k)];
  return rows;
}

TEST(BurstLayout, EverySampleOnceAndTheTransfersBuildTheNextLayout) {
  std::mt19937_64 rng(5);
  const int counts[] = {1, 2, 4, 8, 16};
  for (int trial = 0; trial < 200; ++trial) {
    const int64_t batch = 16 * (1 + int64_t(rng() % 4));
    wt::SampleLayout layout = wt::contiguous_layout(batch, counts[rng() % 5]);
    for (int segment = 0; segment < 6; ++segment) {
      const int g = counts[rng() % 5];
      const wt::SampleLayout next = wt::sticky_layout(layout, g);
      std::vector<int> seen(size_t(batch), 0);
      for (const auto& rank : next.samples) {
        EXPECT_EQ(int64_t(rank.size()), batch / g);
        EXPECT_TRUE(std::is_sorted(rank.begin(), rank.end()));
        for (int64_t i : rank) ++seen[size_t(i)];
      }
      for (int s : seen) ASSERT_EQ(s, 1);
      // A sample whose rank runs the next segment stays there unless that rank is full.
      EXPECT_EQ(apply(layout, wt::layout_transfers(layout, next), g, batch / g), next.samples);
      layout = next;
    }
  }
}

}  // namespace

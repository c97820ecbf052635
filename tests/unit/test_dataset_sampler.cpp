// BatchSampler: every sample at most once per epoch, exactly once up to drop_last, deterministic
// per (seed, epoch), parts tile the global batch.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "data/batch_sampler.hpp"

namespace wt {
namespace {

std::vector<int64_t> epoch_order(const BatchSampler& s, int64_t epoch, int parts) {
  std::vector<int64_t> all;
  for (int64_t b = 0; b < s.batches_per_epoch(); ++b)
    for (int p = 0; p < parts; ++p) {
      auto rows = s.rows(epoch, b, p, parts);
      EXPECT_EQ(int64_t(rows.size()), s.part_size(p, parts));
      all.insert(all.end(), rows.begin(), rows.end());
    }
  return all;
}

TEST(BatchSampler, EverySampleExactlyOncePerEpochAcrossPartsAndBatches) {
  for (int parts : {1, 2, 3, 7}) {
    BatchSampler s(100, 20, 42, true);  // divides evenly: every sample is used
    ASSERT_EQ(s.batches_per_epoch(), 5);
    for (int64_t epoch : {0, 1, 5}) {
      auto order = epoch_order(s, epoch, parts);
      ASSERT_EQ(order.size(), 100u);
      std::sort(order.begin(), order.end());
      for (int64_t i = 0; i < 100; ++i) ASSERT_EQ(order[size_t(i)], i) << "parts " << parts;
    }
  }
}

TEST(BatchSampler, DropLastUsesEachSampleAtMostOnce) {
  BatchSampler s(103, 10, 7, true);
  EXPECT_EQ(s.batches_per_epoch(), 10);
  auto order = epoch_order(s, 3, 4);
  EXPECT_EQ(order.size(), 100u);
  std::set<int64_t> unique(order.begin(), order.end());
  EXPECT_EQ(unique.size(), 100u);
  EXPECT_GE(*unique.begin(), 0);
  EXPECT_LT(*unique.rbegin(), 103);
  EXPECT_THROW(s.rows(0, 10, 0, 1), std::out_of_range);
}

TEST(BatchSampler, PartsTileTheGlobalBatch) {
  BatchSampler s(1000, 64, 3, true);
  const auto whole = s.rows(2, 5, 0, 1);
  for (int parts : {2, 3, 5, 64}) {
    std::vector<int64_t> joined;
    for (int p = 0; p < parts; ++p) {
      auto rows = s.rows(2, 5, p, parts);
      joined.insert(joined.end(), rows.begin(), rows.end());
    }
    EXPECT_EQ(joined, whole) << parts << " parts";
  }
  EXPECT_EQ(s.part_size(0, 3) + s.part_size(1, 3) + s.part_size(2, 3), 64);
  EXPECT_THROW(s.rows(0, 0, 3, 3), std::invalid_argument);
}

TEST(BatchSampler, SameSeedSameOrderAndEpochsDiffer) {
  BatchSampler a(500, 50, 11, true), b(500, 50, 11, true), c(500, 50, 12, true);
  // Query b in a different epoch order, so the permutation cache must not matter.
  auto b1 = epoch_order(b, 1, 1);
  auto b0 = epoch_order(b, 0, 1);
  EXPECT_EQ(epoch_order(a, 0, 1), b0);
  EXPECT_EQ(epoch_order(a, 1, 1), b1);
  EXPECT_NE(b0, b1);
  EXPECT_NE(epoch_order(c, 0, 1), b0);
  std::vector<int64_t> identity(500);
  for (int64_t i = 0; i < 500; ++i) identity[size_t(i)] = i;
  EXPECT_NE(b0, identity);
}

TEST(BatchSampler, NoShuffleIsFileOrder) {
  BatchSampler s(10, 3, 99, false);
  EXPECT_EQ(s.rows(4, 1, 0, 1), (std::vector<int64_t>{3, 4, 5}));
  EXPECT_EQ(s.rows(0, 2, 1, 2), (std::vector<int64_t>{7, 8}));
}

TEST(BatchSampler, AdvanceRollsOverEpochs) {
  BatchSampler s(10, 3, 1, true);
  DataCursor c{0, 2};
  c = s.advance(c);
  EXPECT_EQ(c, (DataCursor{1, 0}));
  EXPECT_EQ(s.advance(c), (DataCursor{1, 1}));
}

TEST(BatchSampler, RejectsBadSizes) {
  EXPECT_THROW(BatchSampler(10, 0, 1, true), std::invalid_argument);
  EXPECT_THROW(BatchSampler(10, 11, 1, true), std::invalid_argument);
}

}  // namespace
}  // namespace wt

// DatasetBatchSource, the one source of training batches: shards line up with the sampler across
// epochs; the preload thread changes nothing but timing, planned or not; planned requests are
// hits and others misses; labels-only requests read no inputs; a batch handed out stays valid;
// the preload thread shares HDF5 safely with another reader.
#include <gtest/gtest.h>

#include "data/dataset_batch_source.hpp"
#include "dataset_test_util.hpp"
#include "test_memory.hpp"

namespace wt {
namespace {

std::vector<float> contents(const Tensor& x, const std::vector<int32_t>& y) {
  std::vector<float> out;
  if (x.defined()) out.assign(x.data(), x.data() + x.numel());
  for (int32_t label : y) out.push_back(float(label));
  return out;
}

// Fetches the sequences in order; with `plan`, each fetch is planned one request ahead, as the
// executor does (the next step's loads are posted when this step's are done).
std::vector<float> fetch_all(DatasetBatchSource& source, const std::vector<int64_t>& sequences,
                             int part, int parts, bool plan) {
  std::vector<float> out;
  Tensor x;
  std::vector<int32_t> y;
  for (size_t i = 0; i < sequences.size(); ++i) {
    source.fetch({sequences[i], part, parts}, x, y);
    if (plan && i + 1 < sequences.size()) source.plan({{sequences[i + 1], part, parts}});
    const auto c = contents(x, y);
    out.insert(out.end(), c.begin(), c.end());
  }
  return out;
}

class SourceTest : public ::testing::Test {
 protected:
  void SetUp() override { testutil::write_synthetic_dataset(path_, 41, 5, {1, 2, 3}, 4); }
  testutil::TempDir dir_{"source"};
  std::string path_ = dir_.file("d.h5");
};

TEST_F(SourceTest, ShardsMatchTheSamplerAndRollOverEpochs) {
  DatasetReader reader(path_, "train", {1, 2, 3}, 10), reference(path_, "train", {1, 2, 3}, 10);
  BatchSampler sampler(reader.size(), 8, 5, true);  // 5 batches per epoch
  DatasetBatchSource source(reader, wt::testing::memory(), sampler, 8, true);
  Tensor x;
  std::vector<int32_t> y;
  for (int64_t sequence = 0; sequence < 12; ++sequence) {
    source.fetch({sequence, 1, 3}, x, y);
    source.plan({{sequence + 1, 1, 3}});
    const auto rows = sampler.rows(sequence / 5, sequence % 5, 1, 3);
    ASSERT_EQ(x.shape(), (Shape{int64_t(rows.size()), 1, 2, 3}));
    std::vector<float> expected(rows.size() * 6);
    std::vector<int32_t> expected_y(rows.size());
    reference.read(rows, expected.data(), expected_y.data());
    EXPECT_EQ(std::vector<float>(x.data(), x.data() + x.numel()), expected);
    EXPECT_EQ(y, expected_y);
  }
  source.quiesce();
}

TEST_F(SourceTest, PreloadOnAndOffAgreePlannedOrNot) {
  DatasetReader reader_a(path_, "train", {1, 2, 3}, 10), reader_b(path_, "train", {1, 2, 3}, 10);
  BatchSampler sampler(reader_a.size(), 6, 3, true);
  DatasetBatchSource with(reader_a, wt::testing::memory(), sampler, 6, true),
      without(reader_b, wt::testing::memory(), sampler, 6, false);
  // In order, then jumping back and forward across epochs.
  const std::vector<int64_t> sequences{0, 1, 2, 3, 4, 5, 6, 7, 3, 20, 21, 2, 2, 9};
  for (int part = 0; part < 2; ++part)
    for (bool plan : {false, true}) {
      const auto a = fetch_all(with, sequences, part, 2, plan);
      EXPECT_FALSE(a.empty());
      EXPECT_EQ(a, fetch_all(without, sequences, part, 2, plan)) << "part " << part;
    }
  with.quiesce();
}

TEST_F(SourceTest, PlannedRequestsAreHitsOthersMisses) {
  DatasetReader reader(path_, "train", {1, 2, 3}, 10);
  BatchSampler sampler(reader.size(), 6, 3, true);
  DatasetBatchSource source(reader, wt::testing::memory(), sampler, 6, true);
  Tensor x;
  std::vector<int32_t> y;
  source.fetch({0, 0, 2}, x, y);  // nothing planned yet
  source.plan({{1, 0, 2}, {1, 1, 2, true}});
  source.fetch({1, 0, 2}, x, y);
  source.fetch({1, 1, 2, true}, x, y);
  source.fetch({2, 0, 2}, x, y);  // not planned
  source.plan({{3, 0, 2}, {4, 0, 2}});
  source.fetch({4, 0, 2}, x, y);  // planned second: waits for the first, still a hit
  source.fetch({3, 0, 2}, x, y);
  const PreloadStats stats = source.preload_stats();
  EXPECT_EQ(stats.hits, 4);
  EXPECT_EQ(stats.misses, 2);
  // Without preloading nothing is read ahead: every fetch is a miss.
  DatasetReader reader_b(path_, "train", {1, 2, 3}, 10);
  DatasetBatchSource off(reader_b, wt::testing::memory(), sampler, 6, false);
  off.plan({{1, 0, 2}});
  off.fetch({1, 0, 2}, x, y);
  EXPECT_EQ(off.preload_stats().hits, 0);
  EXPECT_EQ(off.preload_stats().misses, 1);
}

TEST_F(SourceTest, LabelsOnlyRequestsReadNoInputs) {
  DatasetReader reader(path_, "train", {1, 2, 3}, 10);
  BatchSampler sampler(reader.size(), 6, 3, true);
  for (bool preload : {false, true}) {
    DatasetBatchSource source(reader, wt::testing::memory(), sampler, 6, preload);
    Tensor x, labels_x;
    std::vector<int32_t> y, labels_y;
    source.fetch({5, 1, 2}, x, y);
    source.plan({{5, 1, 2, true}});
    source.fetch({5, 1, 2, true}, labels_x, labels_y);
    EXPECT_FALSE(labels_x.defined()) << "preload " << preload;
    EXPECT_EQ(labels_y, y);
    source.quiesce();
  }
}

TEST_F(SourceTest, ReturnedTensorsStayValidAfterLaterBatches) {
  DatasetReader reader(path_, "train", {1, 2, 3}, 10);
  BatchSampler sampler(reader.size(), 4, 2, true);
  DatasetBatchSource source(reader, wt::testing::memory(), sampler, 4, true);
  Tensor kept, later;
  std::vector<int32_t> y;
  source.fetch({0, 0, 1}, kept, y);
  const std::vector<float> copy(kept.data(), kept.data() + kept.numel());
  for (int64_t s = 1; s < 6; ++s) {
    source.plan({{s, 0, 1}});
    source.fetch({s, 0, 1}, later, y);
  }
  EXPECT_EQ(std::vector<float>(kept.data(), kept.data() + kept.numel()), copy);
}

// The preload thread reads through HDF5 while this thread reads another file: hdf5_mutex() must
// serialise them (the library is not thread-safe), and both must still see the right data.
TEST_F(SourceTest, PreloadThreadAndOtherReaderShareHdf5Safely) {
  const std::string other = dir_.file("other.h5");
  testutil::write_synthetic_dataset(other, 29, 5, {1, 2, 3}, 3);
  DatasetReader train(path_, "train", {1, 2, 3}, 10), reference(path_, "train", {1, 2, 3}, 10);
  DatasetReader second(other, "train", {1, 2, 3}, 10);
  BatchSampler sampler(train.size(), 4, 8, true);
  DatasetBatchSource source(train, wt::testing::memory(), sampler, 4, true);
  Tensor x;
  std::vector<int32_t> y;
  std::vector<float> sx(29 * 6), expected(4 * 6);
  std::vector<int32_t> sy(29), expected_y(4);
  std::vector<int64_t> all(29);
  for (int64_t i = 0; i < 29; ++i) all[size_t(i)] = 28 - i;
  const int64_t per_epoch = sampler.batches_per_epoch();
  for (int64_t step = 0; step < 40; ++step) {
    source.fetch({step, 0, 1}, x, y);
    source.plan({{step + 1, 0, 1}});         // starts the next read in the background
    second.read(all, sx.data(), sy.data());  // concurrently with it
    for (int64_t i = 0; i < 29; ++i) ASSERT_EQ(sy[size_t(i)], ((28 - i) * 3) % 10);
    reference.read(sampler.rows(step / per_epoch, step % per_epoch, 0, 1), expected.data(),
                   expected_y.data());
    ASSERT_EQ(std::vector<float>(x.data(), x.data() + x.numel()), expected);
    ASSERT_EQ(y, expected_y);
  }
  source.quiesce();
}

}  // namespace
}  // namespace wt

// BatchLoader and EvalLoader: resume after seek equals the uninterrupted sequence, preloading
// changes nothing but timing, shards line up with the sampler, eval covers the split once.
#include <gtest/gtest.h>

#include "data/batch_loader.hpp"
#include "data/eval_loader.hpp"
#include "dataset_test_util.hpp"

namespace wt {
namespace {

struct Batch {
  std::vector<float> x;
  std::vector<int32_t> y;
  bool operator==(const Batch& o) const { return x == o.x && y == o.y; }
};

std::vector<Batch> take(BatchLoader& loader, int n) {
  std::vector<Batch> out;
  Tensor x;
  std::vector<int32_t> y;
  for (int i = 0; i < n; ++i) {
    loader.next(x, y);
    out.push_back({std::vector<float>(x.data(), x.data() + x.numel()), y});
  }
  return out;
}

class LoaderTest : public ::testing::Test {
 protected:
  void SetUp() override { testutil::write_synthetic_dataset(path_, 37, 23, {1, 2, 3}, 4); }
  testutil::TempDir dir_{"loader"};
  std::string path_ = dir_.file("d.h5");
};

TEST_F(LoaderTest, ShardsMatchTheSamplerAndRollOverEpochs) {
  DatasetReader reader(path_, "train", {1, 2, 3}, 10);
  BatchSampler sampler(reader.size(), 8, 5, true);  // 4 batches per epoch
  BatchLoader loader(reader, sampler, 1, 3, true);
  Tensor x;
  std::vector<int32_t> y;
  for (int i = 0; i < 10; ++i) {
    const DataCursor c = loader.cursor();
    EXPECT_EQ(c, (DataCursor{i / 4, i % 4}));
    loader.next(x, y);
    const auto rows = sampler.rows(c.epoch, c.batch, 1, 3);
    ASSERT_EQ(x.shape(), (Shape{int64_t(rows.size()), 1, 2, 3}));
    std::vector<float> expected(rows.size() * 6);
    std::vector<int32_t> expected_y(rows.size());
    reader.read(rows, expected.data(), expected_y.data());
    EXPECT_EQ(std::vector<float>(x.data(), x.data() + x.numel()), expected);
    EXPECT_EQ(y, expected_y);
  }
}

TEST_F(LoaderTest, PreloadOnAndOffGiveIdenticalBatches) {
  DatasetReader reader_a(path_, "train", {1, 2, 3}, 10), reader_b(path_, "train", {1, 2, 3}, 10);
  BatchSampler sampler_a(37, 6, 9, true), sampler_b(37, 6, 9, true);
  BatchLoader with(reader_a, sampler_a, 0, 2, true), without(reader_b, sampler_b, 0, 2, false);
  EXPECT_EQ(take(with, 20), take(without, 20));
}

TEST_F(LoaderTest, ResumeAfterSeekEqualsUninterruptedRun) {
  for (bool preload : {false, true}) {
    DatasetReader reader(path_, "train", {1, 2, 3}, 10);
    BatchSampler sampler(37, 5, 21, true);  // 7 batches per epoch
    BatchLoader straight(reader, sampler, 2, 4, preload);
    const auto expected = take(straight, 25);

    DatasetReader reader2(path_, "train", {1, 2, 3}, 10);
    BatchSampler sampler2(37, 5, 21, true);
    BatchLoader first(reader2, sampler2, 2, 4, preload);
    auto got = take(first, 11);
    const DataCursor saved = first.cursor();  // what a checkpoint would store
    EXPECT_EQ(saved, (DataCursor{1, 4}));
    take(first, 3);  // read past the checkpoint; must not leak into the resumed run

    BatchLoader resumed(reader2, sampler2, 2, 4, preload);
    resumed.seek(saved);
    auto rest = take(resumed, 14);
    got.insert(got.end(), rest.begin(), rest.end());
    EXPECT_EQ(got, expected) << "preload " << preload;

    first.seek(saved);  // seek on a loader with a batch read ahead
    EXPECT_EQ(take(first, 14), rest);
  }
}

TEST_F(LoaderTest, ReturnedTensorsStayValidAfterLaterBatches) {
  DatasetReader reader(path_, "train", {1, 2, 3}, 10);
  BatchSampler sampler(37, 4, 2, true);
  BatchLoader loader(reader, sampler, 0, 1, true);
  Tensor kept;
  std::vector<int32_t> y;
  loader.next(kept, y);
  const std::vector<float> copy(kept.data(), kept.data() + kept.numel());
  Tensor later;
  for (int i = 0; i < 5; ++i) loader.next(later, y);
  EXPECT_EQ(std::vector<float>(kept.data(), kept.data() + kept.numel()), copy);
}

TEST_F(LoaderTest, SeekOutsideEpochThrows) {
  DatasetReader reader(path_, "train", {1, 2, 3}, 10);
  BatchSampler sampler(37, 10, 2, true);
  BatchLoader loader(reader, sampler, 0, 1, true);
  EXPECT_THROW(loader.seek({0, 3}), std::out_of_range);
  EXPECT_THROW(BatchLoader(reader, sampler, 1, 1, false), std::invalid_argument);
  BatchSampler wrong_size(30, 10, 2, true);
  EXPECT_THROW(BatchLoader(reader, wrong_size, 0, 1, false), std::invalid_argument);
}

// The preload thread reads through HDF5 while this thread reads another file: hdf5_mutex() must
// serialise them (the library is not thread-safe), and both must still see the right data.
TEST_F(LoaderTest, PreloadThreadAndOtherReaderShareHdf5Safely) {
  const std::string other = dir_.file("other.h5");
  testutil::write_synthetic_dataset(other, 29, 5, {1, 2, 3}, 3);
  DatasetReader train(path_, "train", {1, 2, 3}, 10), reference(path_, "train", {1, 2, 3}, 10);
  DatasetReader second(other, "train", {1, 2, 3}, 10);
  BatchSampler sampler(37, 4, 8, true);
  BatchLoader loader(train, sampler, 0, 1, true);
  Tensor x;
  std::vector<int32_t> y;
  std::vector<float> sx(29 * 6), expected(4 * 6);
  std::vector<int32_t> sy(29), expected_y(4);
  std::vector<int64_t> all(29);
  for (int64_t i = 0; i < 29; ++i) all[size_t(i)] = 28 - i;
  for (int step = 0; step < 40; ++step) {
    const DataCursor c = loader.cursor();
    loader.next(x, y);                       // starts the next read in the background
    second.read(all, sx.data(), sy.data());  // concurrently with it
    for (int64_t i = 0; i < 29; ++i) ASSERT_EQ(sy[size_t(i)], ((28 - i) * 3) % 10);
    reference.read(sampler.rows(c.epoch, c.batch, 0, 1), expected.data(), expected_y.data());
    ASSERT_EQ(std::vector<float>(x.data(), x.data() + x.numel()), expected);
    ASSERT_EQ(y, expected_y);
  }
}

TEST(EvalRows, PartsCoverEachBatchOnce) {
  EXPECT_EQ(eval_rows(10, 8, 4, 0, 1), (std::vector<int64_t>{8, 9}));
  EXPECT_EQ(eval_rows(10, 0, 4, 1, 2), (std::vector<int64_t>{2, 3}));
  EXPECT_TRUE(eval_rows(10, 9, 4, 0, 3).empty());
  EXPECT_EQ(eval_rows(10, 9, 4, 2, 3), (std::vector<int64_t>{9}));
  EXPECT_THROW(eval_rows(10, 0, 4, 2, 2), std::invalid_argument);
}

TEST_F(LoaderTest, EvalLoaderVisitsTheSplitOnceInOrder) {
  DatasetReader reader(path_, "test", {1, 2, 3}, 10);
  std::vector<int32_t> all_labels;
  for (int part = 0; part < 3; ++part) {
    EvalLoader eval(reader, 10, part, 3);
    EXPECT_EQ(eval.batches(), 3);
    Tensor x;
    std::vector<int32_t> y;
    int batches = 0;
    while (eval.next(x, y)) {
      ++batches;
      EXPECT_EQ(x.dim(0), int64_t(y.size()));
      // Part p's rows of batch b are contiguous; reassemble by recomputing them.
      const auto rows = eval_rows(23, (batches - 1) * 10, 10, part, 3);
      for (size_t i = 0; i < rows.size(); ++i) EXPECT_EQ(y[i], (rows[i] * 3) % 10);
      all_labels.insert(all_labels.end(), y.begin(), y.end());
    }
    EXPECT_EQ(batches, 3);
  }
  EXPECT_EQ(all_labels.size(), 23u);
}

}  // namespace
}  // namespace wt

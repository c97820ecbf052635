// DatasetBatchSource: the persistent preload thread changes nothing but timing, whether the next
// fetch is the batch it guessed or another one.
#include <gtest/gtest.h>

#include "data/dataset_batch_source.hpp"
#include "dataset_test_util.hpp"

namespace wt {
namespace {

std::vector<float> fetch_all(DatasetBatchSource& source, const std::vector<int64_t>& sequences,
                             int part, int parts) {
  std::vector<float> out;
  Tensor x;
  std::vector<int32_t> y;
  for (int64_t s : sequences) {
    source.fetch(s, part, parts, x, y);
    out.insert(out.end(), x.data(), x.data() + x.numel());
    for (int32_t label : y) out.push_back(float(label));
  }
  return out;
}

TEST(DatasetBatchSource, PreloadOnAndOffAgreeInAndOutOfOrder) {
  testutil::TempDir dir("source");
  const std::string path = dir.file("d.h5");
  testutil::write_synthetic_dataset(path, 41, 5, {1, 2, 3}, 4);
  DatasetReader reader_a(path, "train", {1, 2, 3}, 10), reader_b(path, "train", {1, 2, 3}, 10);
  BatchSampler sampler(reader_a.size(), 6, 3, true);
  DatasetBatchSource with(reader_a, sampler, 6, true), without(reader_b, sampler, 6, false);
  // In order (the guess is right), then jumps back and forward across epochs (it is wrong).
  const std::vector<int64_t> sequences{0, 1, 2, 3, 4, 5, 6, 7, 3, 20, 21, 2, 2, 9};
  for (int part = 0; part < 2; ++part) {
    const auto a = fetch_all(with, sequences, part, 2);
    EXPECT_FALSE(a.empty());
    EXPECT_EQ(a, fetch_all(without, sequences, part, 2)) << "part " << part;
  }
  with.quiesce();
}

}  // namespace
}  // namespace wt

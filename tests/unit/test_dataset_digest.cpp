// DatasetDigest: the identity the ranks of a job compare before training (issue 17 §4). Copies of
// the same data agree wherever they lie; a copy with fewer samples, another shape or element type,
// other attributes, other labels or other sampled inputs does not, and the differences say what.
#include <gtest/gtest.h>

#include "data/dataset_digest.hpp"
#include "data/dataset_reader.hpp"
#include "dataset_test_util.hpp"

namespace wt {
namespace {

using testutil::TempDir;

DatasetDigest digest_of(const std::string& path) {
  DatasetReader train(path, "train", {}, 0), test(path, "test", {}, 0);
  return dataset_digest(train, test);
}

TEST(DatasetDigest, CopiesAtDifferentPathsAgree) {
  TempDir dir("digest");
  testutil::write_synthetic_dataset(dir.file("a.h5"), 300, 50, {1, 4, 3});
  // Same data, written with another chunking: another file layout, the same dataset.
  testutil::write_synthetic_dataset(dir.file("b.h5"), 300, 50, {1, 4, 3}, /*chunk_samples=*/7);
  const DatasetDigest a = digest_of(dir.file("a.h5")), b = digest_of(dir.file("b.h5"));
  EXPECT_EQ(a, b);
  EXPECT_EQ(digest_differences(a, b), "");
  EXPECT_EQ(a.train.samples, 300);
  EXPECT_EQ(a.test.samples, 50);
  EXPECT_EQ(a.train.dims, 3);
  EXPECT_EQ(a.train.shape[1], 4);
  EXPECT_EQ(a.train.is_float, 0);
  EXPECT_NE(a.describe().find("train 300 x [1, 4, 3] uint8, test 50 x [1, 4, 3] uint8"),
            std::string::npos)
      << a.describe();
}

TEST(DatasetDigest, FewerSamplesDiffer) {
  TempDir dir("digest");
  testutil::write_synthetic_dataset(dir.file("a.h5"), 300, 50, {6});
  testutil::write_synthetic_dataset(dir.file("b.h5"), 299, 50, {6});
  const DatasetDigest a = digest_of(dir.file("a.h5")), b = digest_of(dir.file("b.h5"));
  EXPECT_NE(a, b);
  EXPECT_EQ(digest_differences(a, b), "train samples 300 vs 299");
}

TEST(DatasetDigest, OtherShapeOrAttributesDiffer) {
  TempDir dir("digest");
  testutil::write_synthetic_dataset(dir.file("a.h5"), 40, 10, {2, 6});
  testutil::write_synthetic_dataset(dir.file("b.h5"), 40, 10, {3, 4});
  testutil::write_synthetic_dataset(dir.file("c.h5"), 40, 10, {2, 6}, 0, /*mean=*/0.3);
  const DatasetDigest a = digest_of(dir.file("a.h5"));
  const std::string shapes = digest_differences(a, digest_of(dir.file("b.h5")));
  EXPECT_NE(shapes.find("train sample shape [2, 6] vs [3, 4]"), std::string::npos) << shapes;
  EXPECT_NE(shapes.find("test sample shape"), std::string::npos) << shapes;
  const std::string attributes = digest_differences(a, digest_of(dir.file("c.h5")));
  EXPECT_NE(attributes.find("attributes checksum"), std::string::npos) << attributes;
}

// Rewrites one row of a split (its pixels, or its label) in a copy of the synthetic data.
void write_with_changed_row(const std::string& path, int64_t row, bool label) {
  DatasetSplit train = testutil::synthetic_split("train", 300, {5}, 10);
  if (label)
    train.labels[size_t(row)] = (train.labels[size_t(row)] + 1) % 10;
  else
    train.inputs_u8[size_t(row * 5 + 2)] ^= 0x40;
  DatasetInfo info;
  info.num_classes = 10;
  for (int c = 0; c < 10; ++c) info.class_names.push_back("class" + std::to_string(c));
  info.mean = 0.25;
  info.std = 0.5;
  write_dataset(path, {train, testutil::synthetic_split("test", 50, {5}, 10)}, info);
}

TEST(DatasetDigest, SameShapesOtherRowsDiffer) {
  TempDir dir("digest");
  testutil::write_synthetic_dataset(dir.file("a.h5"), 300, 50, {5});
  const DatasetDigest a = digest_of(dir.file("a.h5"));
  // Any label counts; inputs count in the sampled rows (the first and last are always sampled).
  write_with_changed_row(dir.file("label.h5"), 123, /*label=*/true);
  write_with_changed_row(dir.file("last.h5"), 299, /*label=*/false);
  write_with_changed_row(dir.file("first.h5"), 0, /*label=*/false);
  for (const char* name : {"label.h5", "last.h5", "first.h5"}) {
    const DatasetDigest b = digest_of(dir.file(name));
    EXPECT_NE(a, b) << name;
    EXPECT_NE(digest_differences(a, b).find("rows checksum"), std::string::npos) << name;
    EXPECT_EQ(a.train, b.train) << name;
  }
}

TEST(DatasetDigest, WordsRoundTrip) {
  TempDir dir("digest");
  testutil::write_synthetic_dataset(dir.file("a.h5"), 70000, 3, {1, 2, 3, 1, 1, 2, 2});
  const DatasetDigest a = digest_of(dir.file("a.h5"));
  EXPECT_EQ(a.train.dims, 7);
  EXPECT_EQ(a.train.shape[5], 4);  // the seventh dimension folded into the sixth
  const DatasetDigest back = DatasetDigest::from_words(a.words());
  EXPECT_EQ(back, a);
  EXPECT_EQ(back.describe(), a.describe());
  DatasetDigest big = a;
  big.train.samples = (int64_t(1) << 40) + 5;  // counts past 32 bits survive the trip
  EXPECT_EQ(DatasetDigest::from_words(big.words()).train.samples, big.train.samples);
}

}  // namespace
}  // namespace wt

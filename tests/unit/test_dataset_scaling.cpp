// DatasetReader's normalisation attributes (issue 36): `mean` and `std` as numbers (global
// scaling, as files always had) or as 1-D arrays, one value per channel or per element of a
// sample (per-feature scaling); and every bad array refused with the file and attribute named.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "data/dataset_reader.hpp"
#include "data/dataset_writer.hpp"
#include "dataset_test_util.hpp"
#include "util/hdf5_util.hpp"
#include "util/input_error.hpp"

namespace wt {
namespace {

using testutil::set_array_attr;
using testutil::TempDir;

// Two float32 rows of three features: 1, 10, 1000 and 3, 30, 3000.
void write_table(const std::string& path) {
  DatasetSplit split;
  split.name = "train";
  split.sample_shape = {3};
  split.inputs_f32 = {1.f, 10.f, 1000.f, 3.f, 30.f, 3000.f};
  split.labels = {0, 1};
  DatasetInfo info;
  info.num_classes = 2;
  write_dataset(path, {split}, info);
}

// Two uint8 images of 2 channels, 1x2 pixels: channel 0 holds 0 and 255, channel 1 51 and 102.
void write_images(const std::string& path) {
  DatasetSplit split;
  split.name = "train";
  split.sample_shape = {2, 1, 2};
  split.inputs_u8 = {0, 255, 51, 102, 255, 0, 102, 51};
  split.labels = {0, 1};
  DatasetInfo info;
  info.num_classes = 2;
  write_dataset(path, {split}, info);
}

std::vector<float> read_all(DatasetReader& reader) {
  std::vector<float> x(size_t(reader.size() * reader.sample_numel()));
  std::vector<int64_t> rows(size_t(reader.size()));
  for (int64_t i = 0; i < reader.size(); ++i) rows[size_t(i)] = i;
  for (auto path : {DatasetReader::ReadPath::Hdf5, DatasetReader::ReadPath::Mapped}) {
    reader.set_read_path(path);
    reader.read(rows, x.data(), nullptr);
  }
  std::vector<float> through_hdf5(x.size());
  reader.set_read_path(DatasetReader::ReadPath::Hdf5);
  reader.read(rows, through_hdf5.data(), nullptr);
  EXPECT_EQ(x, through_hdf5) << "the read paths disagree";
  return x;
}

void expect_refused(const std::string& path, const Shape& shape,
                    const std::vector<std::string>& fragments) {
  try {
    DatasetReader reader(path, "train", shape, 2);
    FAIL() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), path);
    for (const auto& f : fragments)
      EXPECT_NE(std::string(e.what()).find(f), std::string::npos) << e.what();
  }
}

TEST(DatasetScaling, PerFeatureFloat32) {
  TempDir dir("scaling");
  const std::string path = dir.file("t.h5");
  write_table(path);
  set_array_attr(path, "mean", {2.0, 20.0, 2000.0});
  set_array_attr(path, "std", {1.0, 10.0, 1000.0});
  DatasetReader reader(path, "train", {3}, 2);
  EXPECT_TRUE(reader.per_feature_scaling());
  EXPECT_EQ(reader.means(), (std::vector<double>{2.0, 20.0, 2000.0}));
  EXPECT_DOUBLE_EQ(reader.std_of(2), 1000.0);
  const std::vector<float> x = read_all(reader);
  const std::vector<float> expected{-1.f, -1.f, -1.f, 1.f, 1.f, 1.f};
  for (size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(x[i], expected[i], 1e-6) << i;
}

TEST(DatasetScaling, PerFeatureMeanWithGlobalStd) {
  TempDir dir("scaling");
  const std::string path = dir.file("t.h5");
  write_table(path);
  set_array_attr(path, "mean", {1.0, 10.0, 1000.0});
  DatasetReader reader(path, "train", {3}, 2);  // std absent: 1
  const std::vector<float> x = read_all(reader);
  const std::vector<float> expected{0.f, 0.f, 0.f, 2.f, 20.f, 2000.f};
  for (size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(x[i], expected[i], 1e-4) << i;
}

TEST(DatasetScaling, PerChannelUint8Images) {
  TempDir dir("scaling");
  const std::string path = dir.file("i.h5");
  write_images(path);
  set_array_attr(path, "mean", {0.5, 0.3});
  set_array_attr(path, "std", {0.5, 0.1});
  DatasetReader reader(path, "train", {2, 1, 2}, 2);
  EXPECT_DOUBLE_EQ(reader.mean_of(1), 0.5);  // channel 0
  EXPECT_DOUBLE_EQ(reader.mean_of(2), 0.3);  // channel 1
  const std::vector<float> x = read_all(reader);
  const std::vector<float> expected{-1.f, 1.f, -1.f, 1.f, 1.f, -1.f, 1.f, -1.f};
  for (size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(x[i], expected[i], 1e-5) << i;
}

TEST(DatasetScaling, ScalarsAndOneElementArraysStayGlobal) {
  TempDir dir("scaling");
  const std::string path = dir.file("t.h5");
  write_table(path);
  set_array_attr(path, "mean", {1.0});
  set_array_attr(path, "std", {2.0});
  DatasetReader reader(path, "train", {3}, 2);
  EXPECT_FALSE(reader.per_feature_scaling());
  EXPECT_DOUBLE_EQ(reader.mean(), 1.0);
  EXPECT_NEAR(read_all(reader)[5], 1499.5f, 1e-3);
}

TEST(DatasetScaling, BadArraysNameTheFileAndAttribute) {
  TempDir dir("scaling");
  const std::string path = dir.file("t.h5");
  write_table(path);
  set_array_attr(path, "mean", {1.0, 2.0});
  expect_refused(path, {3}, {"mean", "2 values for samples of shape [3]", "one per element (3)"});
  set_array_attr(path, "mean", {1.0, std::nan(""), 2.0});
  expect_refused(path, {3}, {"mean", "(value 1) is not finite (NaN)"});
  set_array_attr(path, "mean", {0.0, 0.0, 0.0});
  set_array_attr(path, "std", {1.0, 0.0, 1.0});
  expect_refused(path, {3}, {"std", "(value 1) must be > 0, found 0"});
  set_array_attr(path, "std", {1.0, -2.0, 1.0});
  expect_refused(path, {3}, {"std", "must be > 0, found -2"});
  set_array_attr(path, "std", {1.0, 1.0, std::numeric_limits<double>::infinity()});
  expect_refused(path, {3}, {"std", "(value 2) is not finite (Inf)"});
  set_array_attr(path, "std", {0.0});
  expect_refused(path, {3}, {"std", "must be > 0, found 0"});
}

TEST(DatasetScaling, PerChannelLengthMustMatchTheChannels) {
  TempDir dir("scaling");
  const std::string path = dir.file("i.h5");
  write_images(path);
  set_array_attr(path, "std", {0.5, 0.5, 0.5});
  expect_refused(path, {2, 1, 2}, {"std", "3 values", "one per channel (2)", "per element (4)"});
}

}  // namespace
}  // namespace wt

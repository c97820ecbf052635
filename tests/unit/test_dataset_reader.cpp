// DatasetReader: round trips through the writer, arbitrary row orders, and every kind of bad
// dataset turning into an InputError that names the problem.
#include <gtest/gtest.h>

#include <fstream>

#include "data/dataset_reader.hpp"
#include "dataset_test_util.hpp"
#include "util/hdf5_util.hpp"
#include "util/input_error.hpp"

namespace wt {
namespace {

using testutil::synthetic_pixel;
using testutil::TempDir;

float expected_value(int64_t row, int64_t e, double mean, double std) {
  return float((synthetic_pixel(row, e) / 255.0 - mean) / std);
}

// Expects constructing a reader to throw InputError whose message contains every fragment.
void expect_input_error(const std::string& path, const std::string& split, const Shape& shape,
                        int classes, const std::vector<std::string>& fragments) {
  try {
    DatasetReader reader(path, split, shape, classes);
    FAIL() << "no InputError for " << path;
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), path);
    for (const auto& f : fragments)
      EXPECT_NE(std::string(e.what()).find(f), std::string::npos) << e.what();
  }
}

TEST(DatasetReader, RoundTripInFileOrder) {
  TempDir dir("reader");
  const std::string path = dir.file("d.h5");
  testutil::write_synthetic_dataset(path, 50, 20, {1, 4, 3}, /*chunk_samples=*/8);
  DatasetReader reader(path, "train", {1, 4, 3}, 10);
  ASSERT_EQ(reader.size(), 50);
  EXPECT_EQ(reader.sample_shape(), (Shape{1, 4, 3}));
  EXPECT_DOUBLE_EQ(reader.mean(), 0.25);
  EXPECT_DOUBLE_EQ(reader.std_dev(), 0.5);
  EXPECT_EQ(reader.class_names().size(), 10u);
  EXPECT_EQ(reader.class_names()[3], "class3");
  EXPECT_EQ(reader.source(), "synthetic test data");

  std::vector<int64_t> rows(50);
  for (int64_t i = 0; i < 50; ++i) rows[size_t(i)] = i;
  std::vector<float> x(50 * 12);
  std::vector<int32_t> y(50);
  reader.read(rows, x.data(), y.data());
  for (int64_t r = 0; r < 50; ++r) {
    EXPECT_EQ(y[size_t(r)], (r * 3) % 10);
    for (int64_t e = 0; e < 12; ++e)
      ASSERT_FLOAT_EQ(x[size_t(r * 12 + e)], expected_value(r, e, 0.25, 0.5)) << r << "," << e;
  }
}

TEST(DatasetReader, ShuffledRowsWithRepeatsAcrossChunks) {
  TempDir dir("reader");
  const std::string path = dir.file("d.h5");
  testutil::write_synthetic_dataset(path, 40, 10, {2, 3}, /*chunk_samples=*/5);
  DatasetReader reader(path, "test", {2, 3}, 10);
  ASSERT_EQ(reader.size(), 10);
  const std::vector<int64_t> rows{9, 0, 4, 5, 6, 4, 1, 8, 2, 3, 7, 9};  // runs, gaps, repeats
  std::vector<float> x(rows.size() * 6);
  std::vector<int32_t> y(rows.size());
  reader.read(rows, x.data(), y.data());
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(y[i], (rows[i] * 3) % 10);
    for (int64_t e = 0; e < 6; ++e)
      ASSERT_FLOAT_EQ(x[i * 6 + size_t(e)], expected_value(rows[i], e, 0.25, 0.5));
  }
  EXPECT_THROW(reader.read({10}, x.data(), y.data()), std::out_of_range);
  EXPECT_THROW(reader.read({-1}, x.data(), y.data()), std::out_of_range);
}

TEST(DatasetReader, Float32InputsAreNormalisedWithoutScaling) {
  TempDir dir("reader");
  const std::string path = dir.file("f.h5");
  DatasetSplit split;
  split.name = "train";
  split.sample_shape = {3};
  split.inputs_f32 = {0.f, 1.f, 2.f, 3.f, 4.f, 5.f};
  split.labels = {1, 0};
  DatasetInfo info;
  info.num_classes = 2;
  info.mean = 1.0;
  info.std = 2.0;
  write_dataset(path, {split}, info);
  DatasetReader reader(path, "train", {3}, 2);
  std::vector<float> x(6);
  std::vector<int32_t> y(2);
  reader.read({1, 0}, x.data(), y.data());
  EXPECT_EQ(y, (std::vector<int32_t>{0, 1}));
  const std::vector<float> expected{1.f, 1.5f, 2.f, -0.5f, 0.f, 0.5f};  // rows 1, 0
  for (size_t i = 0; i < 6; ++i) EXPECT_FLOAT_EQ(x[i], expected[i]);
}

TEST(DatasetReader, MissingFile) {
  TempDir dir("reader");
  expect_input_error(dir.file("absent.h5"), "train", {1, 4, 3}, 10, {"not found"});
}

TEST(DatasetReader, NotHdf5) {
  TempDir dir("reader");
  const std::string path = dir.file("text.h5");
  std::ofstream(path) << "this is a text file, not HDF5\n";
  expect_input_error(path, "train", {1, 4, 3}, 10, {"not an HDF5 file"});
}

TEST(DatasetReader, MissingSplitListsTheSplitsThere) {
  TempDir dir("reader");
  const std::string path = dir.file("d.h5");
  testutil::write_synthetic_dataset(path, 8, 4, {1, 4, 3});
  expect_input_error(path, "validation", {1, 4, 3}, 10, {"/validation", "test, train"});
}

TEST(DatasetReader, MissingLabels) {
  TempDir dir("reader");
  const std::string path = dir.file("d.h5");
  testutil::write_synthetic_dataset(path, 8, 4, {1, 4, 3});
  {
    std::lock_guard<std::recursive_mutex> lock(hdf5_mutex());
    H5Handle file(H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), H5Fclose);
    ASSERT_GE(H5Ldelete(file.get(), "/train/labels", H5P_DEFAULT), 0);
  }
  expect_input_error(path, "train", {1, 4, 3}, 10, {"/train/labels", "missing"});
}

TEST(DatasetReader, LabelOutsideClassRange) {
  TempDir dir("reader");
  const std::string path = dir.file("d.h5");
  DatasetSplit split = testutil::synthetic_split("train", 6, {2}, 10);
  split.labels[4] = 10;
  DatasetInfo info;
  info.num_classes = 10;
  write_dataset(path, {split}, info);
  expect_input_error(path, "train", {2}, 10, {"/train/labels", "label 10 at row 4", "[0, 10)"});
  split.labels[4] = -1;
  write_dataset(path, {split}, info);
  expect_input_error(path, "train", {2}, 10, {"label -1 at row 4"});
}

TEST(DatasetReader, WrongSampleShapeOrRank) {
  TempDir dir("reader");
  const std::string path = dir.file("d.h5");
  testutil::write_synthetic_dataset(path, 8, 4, {1, 4, 3});
  expect_input_error(path, "train", {1, 3, 4}, 10,
                     {"/train/inputs", "[1, 4, 3]", "model expects [1, 3, 4]"});
  expect_input_error(path, "train", {12}, 10, {"/train/inputs", "model expects [12]"});
  testutil::write_synthetic_dataset(path, 8, 4, {12});
  expect_input_error(path, "train", {1, 4, 3}, 10, {"/train/inputs", "samples have shape [12]"});
}

TEST(DatasetReader, UnsupportedElementTypeAndLabelCountMismatch) {
  TempDir dir("reader");
  const std::string path = dir.file("d.h5");
  testutil::write_synthetic_dataset(path, 8, 4, {2});
  {
    std::lock_guard<std::recursive_mutex> lock(hdf5_mutex());
    H5Handle file(H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), H5Fclose);
    H5Ldelete(file.get(), "/test/inputs", H5P_DEFAULT);
    hsize_t dims[2] = {4, 2};
    H5Handle space(H5Screate_simple(2, dims, nullptr), H5Sclose);
    H5Handle d(H5Dcreate2(file.get(), "/test/inputs", H5T_STD_I16LE, space.get(), H5P_DEFAULT,
                          H5P_DEFAULT, H5P_DEFAULT),
               H5Dclose);
    ASSERT_TRUE(d.valid());
    H5Ldelete(file.get(), "/train/labels", H5P_DEFAULT);
    hsize_t n = 7;
    H5Handle lspace(H5Screate_simple(1, &n, nullptr), H5Sclose);
    H5Handle l(H5Dcreate2(file.get(), "/train/labels", H5T_STD_I32LE, lspace.get(), H5P_DEFAULT,
                          H5P_DEFAULT, H5P_DEFAULT),
               H5Dclose);
    ASSERT_TRUE(l.valid());
  }
  expect_input_error(path, "test", {2}, 10, {"/test/inputs", "uint8 or float32"});
  expect_input_error(path, "train", {2}, 10, {"/train/labels", "[8]", "[7]"});
}

TEST(DatasetReader, ClassCountFromFileWhenNotGiven) {
  TempDir dir("reader");
  const std::string path = dir.file("d.h5");
  DatasetSplit split = testutil::synthetic_split("train", 6, {2}, 10);
  split.labels[2] = 7;
  DatasetInfo info;
  info.num_classes = 5;
  write_dataset(path, {split}, info);
  expect_input_error(path, "train", {}, 0, {"label 7 at row 2", "[0, 5)"});
}

}  // namespace
}  // namespace wt

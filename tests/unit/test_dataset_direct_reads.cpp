// DatasetReader's read paths: a memory map or pread() at the addresses RowLocator finds
// (uncompressed data) and H5Dread (the fallback, and the only path for compressed data) must give
// identical results.
#include <gtest/gtest.h>

#include <random>

#include "data/dataset_reader.hpp"
#include "dataset_test_util.hpp"
#include "util/hdf5_util.hpp"

namespace wt {
namespace {

using testutil::synthetic_pixel;
using testutil::TempDir;

std::vector<int64_t> shuffled_rows_with_repeats(int64_t size, size_t count, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int64_t> pick(0, size - 1);
  std::vector<int64_t> rows;
  for (size_t i = 0; i < count; ++i) rows.push_back(pick(gen));
  // A run of consecutive rows across a chunk boundary and a repeat, which take special paths.
  for (int64_t r = 3; r < 14 && r < size; ++r) rows.push_back(r);
  rows.push_back(rows.front());
  return rows;
}

using Path = DatasetReader::ReadPath;

void expect_paths_agree(DatasetReader& reader, const std::vector<int64_t>& rows) {
  const size_t per = size_t(reader.sample_numel());
  std::vector<std::vector<float>> x;
  std::vector<std::vector<int32_t>> y;
  for (Path p : {Path::Mapped, Path::Pread, Path::Hdf5}) {
    ASSERT_EQ(reader.set_read_path(p), p) << reader.direct_reads_unavailable_because();
    x.emplace_back(rows.size() * per);
    y.emplace_back(rows.size());
    reader.read(rows, x.back().data(), y.back().data());
  }
  for (size_t k = 1; k < x.size(); ++k) {
    EXPECT_EQ(y[0], y[k]);
    ASSERT_EQ(x[0], x[k]) << "path " << k;  // bit-identical
  }
}

TEST(DatasetDirectReads, ChunkedUint8MatchesHdf5Path) {
  TempDir dir("direct");
  const std::string path = dir.file("d.h5");
  testutil::write_synthetic_dataset(path, 103, 20, {1, 4, 3}, /*chunk_samples=*/8);
  DatasetReader reader(path, "train", {1, 4, 3}, 10);
  EXPECT_EQ(reader.read_path(), Path::Mapped) << reader.direct_reads_unavailable_because();
  const auto rows = shuffled_rows_with_repeats(reader.size(), 200, 7);
  expect_paths_agree(reader, rows);
  // And both are right, not merely equal.
  std::vector<float> x(rows.size() * 12);
  reader.set_read_path(Path::Mapped);
  reader.read(rows, x.data(), nullptr);
  for (size_t i = 0; i < rows.size(); ++i)
    for (int64_t e = 0; e < 12; ++e)
      ASSERT_FLOAT_EQ(x[i * 12 + size_t(e)],
                      float((synthetic_pixel(rows[i], e) / 255.0 - 0.25) / 0.5));
}

TEST(DatasetDirectReads, Float32MatchesHdf5Path) {
  TempDir dir("direct");
  const std::string path = dir.file("f.h5");
  DatasetSplit split;
  split.name = "train";
  split.sample_shape = {5};
  split.chunk_samples = 3;
  for (int r = 0; r < 40; ++r) {
    for (int e = 0; e < 5; ++e) split.inputs_f32.push_back(float(r) * 0.5f - float(e));
    split.labels.push_back(r % 4);
  }
  DatasetInfo info;
  info.num_classes = 4;
  info.mean = 0.5;
  info.std = 3.0;
  write_dataset(path, {split}, info);
  DatasetReader reader(path, "train", {5}, 4);
  expect_paths_agree(reader, shuffled_rows_with_repeats(reader.size(), 100, 3));
}

TEST(DatasetDirectReads, CompressedDatasetFallsBackToHdf5) {
  TempDir dir("direct");
  const std::string path = dir.file("gz.h5");
  testutil::write_synthetic_dataset(path, 30, 10, {6}, /*chunk_samples=*/4);
  {
    // Replace /train/inputs with a deflate-compressed copy of the same values.
    std::lock_guard<std::recursive_mutex> lock(hdf5_mutex());
    H5Handle file(H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), H5Fclose);
    ASSERT_TRUE(file.valid());
    ASSERT_GE(H5Ldelete(file.get(), "/train/inputs", H5P_DEFAULT), 0);
    const hsize_t dims[2] = {30, 6}, chunk[2] = {4, 6};
    H5Handle space(H5Screate_simple(2, dims, nullptr), H5Sclose);
    H5Handle dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
    H5Pset_chunk(dcpl.get(), 2, chunk);
    H5Pset_deflate(dcpl.get(), 4);
    H5Handle dset(H5Dcreate2(file.get(), "/train/inputs", H5T_NATIVE_UINT8, space.get(),
                             H5P_DEFAULT, dcpl.get(), H5P_DEFAULT),
                  H5Dclose);
    ASSERT_TRUE(dset.valid());
    std::vector<uint8_t> values;
    for (int64_t r = 0; r < 30; ++r)
      for (int64_t e = 0; e < 6; ++e) values.push_back(synthetic_pixel(r, e));
    ASSERT_GE(H5Dwrite(dset.get(), H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()),
              0);
  }
  DatasetReader reader(path, "train", {6}, 10);
  EXPECT_EQ(reader.read_path(), Path::Hdf5);
  EXPECT_NE(reader.direct_reads_unavailable_because().find("filtered"), std::string::npos);
  EXPECT_EQ(reader.set_read_path(Path::Mapped), Path::Hdf5);  // cannot be forced on
  const auto rows = shuffled_rows_with_repeats(reader.size(), 50, 11);
  std::vector<float> x(rows.size() * 6);
  reader.read(rows, x.data(), nullptr);
  for (size_t i = 0; i < rows.size(); ++i)
    for (int64_t e = 0; e < 6; ++e)
      ASSERT_FLOAT_EQ(x[i * 6 + size_t(e)],
                      float((synthetic_pixel(rows[i], e) / 255.0 - 0.25) / 0.5));
}

}  // namespace
}  // namespace wt

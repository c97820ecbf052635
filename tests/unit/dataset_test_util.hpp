#pragma once
// Helpers for the dataset tests: a self-deleting temporary directory and small synthetic splits
// whose pixel values encode their row, so any mix-up of rows is visible.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include "data/dataset_writer.hpp"
#include "util/hdf5_util.hpp"

namespace wt::testutil {

class TempDir {
 public:
  explicit TempDir(const std::string& tag) {
    static int counter = 0;
    path_ = std::filesystem::temp_directory_path() /
            ("wt_" + tag + "_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

// Pixel e of row r; deterministic and different for neighbouring rows.
inline uint8_t synthetic_pixel(int64_t r, int64_t e) {
  return uint8_t((r * 37 + e * 11 + r / 7) % 256);
}

inline DatasetSplit synthetic_split(const std::string& name, int64_t n, const Shape& sample_shape,
                                    int classes, int64_t chunk_samples = 0) {
  DatasetSplit split;
  split.name = name;
  split.sample_shape = sample_shape;
  split.chunk_samples = chunk_samples;
  const int64_t per = shape_numel(sample_shape);
  split.inputs_u8.resize(size_t(n * per));
  split.labels.resize(size_t(n));
  for (int64_t r = 0; r < n; ++r) {
    for (int64_t e = 0; e < per; ++e) split.inputs_u8[size_t(r * per + e)] = synthetic_pixel(r, e);
    split.labels[size_t(r)] = int32_t((r * 3) % classes);
  }
  return split;
}

// A file with /train (n_train rows) and /test (n_test rows), 10 classes.
inline void write_synthetic_dataset(const std::string& path, int64_t n_train, int64_t n_test,
                                    const Shape& sample_shape, int64_t chunk_samples = 0,
                                    double mean = 0.25, double std = 0.5) {
  DatasetInfo info;
  info.num_classes = 10;
  for (int c = 0; c < 10; ++c) info.class_names.push_back("class" + std::to_string(c));
  info.mean = mean;
  info.std = std;
  info.source = "synthetic test data";
  write_dataset(path,
                {synthetic_split("train", n_train, sample_shape, 10, chunk_samples),
                 synthetic_split("test", n_test, sample_shape, 10, chunk_samples)},
                info);
}

// Replaces attribute `name` of the file's root with a 1-D float64 array.
inline void set_array_attr(const std::string& path, const char* name,
                           const std::vector<double>& values) {
  std::lock_guard<std::recursive_mutex> lock(hdf5_mutex());
  H5Handle file(H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), H5Fclose);
  ASSERT_TRUE(file.valid());
  if (H5Aexists(file.get(), name) > 0) H5Adelete(file.get(), name);
  const hsize_t n = values.size();
  H5Handle space(H5Screate_simple(1, &n, nullptr), H5Sclose);
  H5Handle attr(H5Acreate2(file.get(), name, H5T_IEEE_F64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT),
                H5Aclose);
  ASSERT_TRUE(attr.valid());
  ASSERT_GE(H5Awrite(attr.get(), H5T_NATIVE_DOUBLE, values.data()), 0);
}

}  // namespace wt::testutil

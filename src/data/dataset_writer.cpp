#include "data/dataset_writer.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include "util/hdf5_util.hpp"

namespace wt {

namespace {

void check_split(const DatasetSplit& split) {
  if (split.name.empty()) throw std::invalid_argument("dataset split without a name");
  const int64_t sample = shape_numel(split.sample_shape);
  if (split.sample_shape.empty() || sample <= 0)
    throw std::invalid_argument("split " + split.name + ": bad sample shape " +
                                shape_str(split.sample_shape));
  const bool is_float = !split.inputs_f32.empty();
  if (is_float && !split.inputs_u8.empty())
    throw std::invalid_argument("split " + split.name + ": give uint8 or float inputs, not both");
  const size_t values = is_float ? split.inputs_f32.size() : split.inputs_u8.size();
  const size_t per_label = static_cast<size_t>(shape_numel(split.label_shape));
  if (per_label == 0 || split.labels.size() % per_label != 0)
    throw std::invalid_argument("split " + split.name + ": " + std::to_string(split.labels.size()) +
                                " labels are not a whole number of label shapes " +
                                shape_str(split.label_shape));
  if (values != split.labels.size() / per_label * static_cast<size_t>(sample))
    throw std::invalid_argument("split " + split.name + ": " + std::to_string(values) +
                                " input values for " + std::to_string(split.labels.size()) +
                                " labels of sample shape " + shape_str(split.sample_shape));
}

void write_split(hid_t file, const DatasetSplit& split) {
  const bool is_float = !split.inputs_f32.empty();
  const int64_t n = static_cast<int64_t>(split.labels.size()) / shape_numel(split.label_shape);
  const int64_t sample = shape_numel(split.sample_shape);
  const int64_t value_bytes = is_float ? 4 : 1;

  H5Handle group(H5Gcreate2(file, split.name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                 H5Gclose);
  if (!group.valid()) throw std::runtime_error("cannot create group /" + split.name);

  std::vector<hsize_t> dims{static_cast<hsize_t>(n)};
  for (int64_t d : split.sample_shape) dims.push_back(static_cast<hsize_t>(d));
  H5Handle space(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), H5Sclose);

  // Chunks span whole samples, so a shard's rows are contiguous runs inside a few chunks.
  int64_t chunk_rows = split.chunk_samples;
  if (chunk_rows <= 0)
    chunk_rows = std::max<int64_t>(1, (int64_t(1) << 20) / (sample * value_bytes));
  chunk_rows = std::max<int64_t>(1, std::min(chunk_rows, n));
  std::vector<hsize_t> chunk = dims;
  chunk[0] = static_cast<hsize_t>(chunk_rows);
  H5Handle dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  if (n > 0) H5Pset_chunk(dcpl.get(), static_cast<int>(chunk.size()), chunk.data());

  hid_t file_type = is_float ? H5T_IEEE_F32LE : H5T_STD_U8LE;
  hid_t mem_type = is_float ? H5T_NATIVE_FLOAT : H5T_NATIVE_UINT8;
  H5Handle inputs(H5Dcreate2(group.get(), "inputs", file_type, space.get(), H5P_DEFAULT, dcpl.get(),
                             H5P_DEFAULT),
                  H5Dclose);
  if (!inputs.valid()) throw std::runtime_error("cannot create /" + split.name + "/inputs");
  const void* data = is_float ? static_cast<const void*>(split.inputs_f32.data())
                              : static_cast<const void*>(split.inputs_u8.data());
  if (n > 0 && H5Dwrite(inputs.get(), mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)
    throw std::runtime_error("cannot write /" + split.name + "/inputs");

  std::vector<hsize_t> label_dims{static_cast<hsize_t>(n)};
  for (int64_t d : split.label_shape) label_dims.push_back(static_cast<hsize_t>(d));
  H5Handle label_space(
      H5Screate_simple(static_cast<int>(label_dims.size()), label_dims.data(), nullptr), H5Sclose);
  H5Handle labels(H5Dcreate2(group.get(), "labels", H5T_STD_I32LE, label_space.get(), H5P_DEFAULT,
                             H5P_DEFAULT, H5P_DEFAULT),
                  H5Dclose);
  if (!labels.valid() || (n > 0 && H5Dwrite(labels.get(), H5T_NATIVE_INT32, H5S_ALL, H5S_ALL,
                                            H5P_DEFAULT, split.labels.data()) < 0))
    throw std::runtime_error("cannot write /" + split.name + "/labels");
}

void fsync_path(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) throw std::runtime_error("cannot reopen " + path + " to sync it");
  int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) throw std::runtime_error("fsync failed for " + path);
}

}  // namespace

void write_dataset(const std::string& path, const std::vector<DatasetSplit>& splits,
                   const DatasetInfo& info) {
  for (const auto& split : splits) check_split(split);
  if (info.num_classes <= 0) throw std::invalid_argument("dataset needs num_classes > 0");
  if (!info.class_names.empty() &&
      static_cast<int64_t>(info.class_names.size()) != info.num_classes)
    throw std::invalid_argument("class_names has " + std::to_string(info.class_names.size()) +
                                " entries for " + std::to_string(info.num_classes) + " classes");

  const std::string temp = path + ".tmp." + std::to_string(::getpid());
  try {
    std::lock_guard<std::recursive_mutex> lock(hdf5_mutex());
    hdf5_silence_errors();
    H5Handle file(H5Fcreate(temp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose);
    if (!file.valid()) throw std::runtime_error("cannot create " + temp);
    for (const auto& split : splits) write_split(file.get(), split);
    h5_write_attr_int(file.get(), "num_classes", info.num_classes);
    if (!info.class_names.empty())
      h5_write_attr_strings(file.get(), "class_names", info.class_names);
    h5_write_attr_double(file.get(), "mean", info.mean);
    h5_write_attr_double(file.get(), "std", info.std);
    h5_write_attr_string(file.get(), "source", info.source);
    if (info.token_ids) h5_write_attr_int(file.get(), "token_ids", 1);
    if (H5Fflush(file.get(), H5F_SCOPE_GLOBAL) < 0)
      throw std::runtime_error("cannot flush " + temp);
    file.reset();
    fsync_path(temp);
    std::filesystem::rename(temp, path);
  } catch (...) {
    std::error_code ignored;
    std::filesystem::remove(temp, ignored);
    throw;
  }
}

}  // namespace wt

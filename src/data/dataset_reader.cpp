#include "data/dataset_reader.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <numeric>
#include <stdexcept>

#include "data/mapped_read_guard.hpp"
#include "util/file_lock_holder.hpp"
#include "util/input_error.hpp"

namespace wt {

namespace {

using Lock = std::lock_guard<std::recursive_mutex>;

std::vector<std::string> child_names(hid_t group) {
  std::vector<std::string> names;
  H5Literate(
      group, H5_INDEX_NAME, H5_ITER_INC, nullptr,
      [](hid_t, const char* name, const H5L_info_t*, void* out) -> herr_t {
        static_cast<std::vector<std::string>*>(out)->push_back(name);
        return 0;
      },
      &names);
  return names;
}

std::string join(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s.empty() ? "nothing" : s;
}

Shape dataset_dims(hid_t dset) {
  H5Handle space(H5Dget_space(dset), H5Sclose);
  int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank < 0) return {};
  std::vector<hsize_t> dims(static_cast<size_t>(rank));
  H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
  return Shape(dims.begin(), dims.end());
}

int64_t mtime_ns(const struct stat& st) {
  return int64_t(st.st_mtim.tv_sec) * 1000000000 + int64_t(st.st_mtim.tv_nsec);
}

}  // namespace

void DatasetReader::fail(const std::string& key, const std::string& message) const {
  throw InputError(path_, 0, key, message);
}

// HDF5 cannot open a file another program holds open for writing (its file locking): that is not
// damage, and the message must not say so.
void DatasetReader::fail_locked_or(const std::string& message) const {
  const std::string holder = conflicting_lock_holder(path_);
  if (!holder.empty())
    fail("", "locked: " + holder +
                 " (another program has it open for writing, a converter still running?); "
                 "wait until it has finished and closed the file, then run again");
  fail("", message);
}

void DatasetReader::check_unchanged(const std::string& failed) const {
  struct stat now;
  if (fd_ >= 0 && ::fstat(fd_, &now) == 0 &&
      (int64_t(now.st_size) != opened_size_ || mtime_ns(now) != opened_mtime_ns_)) {
    std::string how = "size " + std::to_string(opened_size_) + " -> " +
                      std::to_string(int64_t(now.st_size)) + " bytes";
    if (int64_t(now.st_size) == opened_size_) how = "same size, modified again";
    fail("/" + split_ + "/inputs",
         "the dataset file changed while the job ran (" + how +
             "): truncated or rewritten in place, by a converter run again say. Its rows can no "
             "longer be trusted: restore the file (write new versions under another name), then "
             "resume from the last checkpoint with --restart");
  }
  if (!failed.empty()) fail("/" + split_ + "/inputs", failed);
}

DatasetReader::DatasetReader(const std::string& path, const std::string& split,
                             const Shape& expected_sample_shape, int classes)
    : path_(path), split_(split) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path_, ec))
    fail("", std::filesystem::exists(path_, ec) ? "not a regular file" : "dataset file not found");

  // The file's stamp, before HDF5 reads anything of it: later reads compare against it.
  fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd_ >= 0 && ::fstat(fd_, &st) == 0) {
    opened_size_ = int64_t(st.st_size);
    opened_mtime_ns_ = mtime_ns(st);
  }
  Lock lock(hdf5_mutex());
  try {
    open(expected_sample_shape, classes);
  } catch (...) {
    inputs_.reset();  // close under the lock: members would otherwise close after it is released
    file_.reset();
    if (fd_ >= 0) ::close(fd_);
    throw;
  }
  build_u8_table();
  open_direct();
}

void DatasetReader::open_direct() {
  {
    Lock lock(hdf5_mutex());
    const hid_t native = inputs_are_float_ ? H5T_NATIVE_FLOAT : H5T_NATIVE_UINT8;
    if (!RowLocator::locate(file_.get(), inputs_.get(), native, &locator_, &no_direct_reason_))
      return;
  }
  if (fd_ < 0) {
    no_direct_reason_ = "cannot open for pread";
    return;
  }
  struct stat st;
  if (::fstat(fd_, &st) != 0 || int64_t(st.st_size) < locator_.end_offset()) {
    no_direct_reason_ = "file is shorter than its row data (truncated?)";
    return;
  }
  best_path_ = path_in_use_ = ReadPath::Pread;
  // Mapping reads nothing yet: pages come in as rows on them are first read. MADV_RANDOM stops
  // read-ahead from pulling in neighbours of each shuffled row.
  void* m = ::mmap(nullptr, size_t(st.st_size), PROT_READ, MAP_SHARED, fd_, 0);
  if (m == MAP_FAILED) return;  // pread it is
  ::madvise(m, size_t(st.st_size), MADV_RANDOM);
  map_ = static_cast<const uint8_t*>(m);
  map_bytes_ = size_t(st.st_size);
  best_path_ = path_in_use_ = ReadPath::Mapped;
}

DatasetReader::ReadPath DatasetReader::set_read_path(ReadPath wanted) {
  path_in_use_ = std::min(wanted, best_path_);
  return path_in_use_;
}

void DatasetReader::open(const Shape& expected_sample_shape, int classes) {
  hdf5_silence_errors();
  if (H5Fis_hdf5(path_.c_str()) <= 0) fail_locked_or("not an HDF5 file");
  file_ = H5Handle(H5Fopen(path_.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!file_.valid()) fail_locked_or("cannot open the HDF5 file (permissions or a damaged file?)");
  if (H5Lexists(file_.get(), split_.c_str(), H5P_DEFAULT) <= 0)
    fail("/" + split_, "no such split; the file has: " + join(child_names(file_.get())));

  open_inputs(expected_sample_shape);
  read_attributes();
  try {
    int64_t from_file = 0;
    if (h5_read_attr_int(file_.get(), "num_classes", &from_file)) declared_classes_ = from_file;
  } catch (const std::exception& e) {
    fail("num_classes", e.what());
  }
  // No class count given: trust the file's own attribute if it has one.
  if (classes <= 0 && declared_classes_ > 0) classes = int(declared_classes_);
  load_labels(classes);
}

DatasetReader::~DatasetReader() {
  if (map_) ::munmap(const_cast<uint8_t*>(map_), map_bytes_);
  if (fd_ >= 0) ::close(fd_);
  Lock lock(hdf5_mutex());
  inputs_.reset();
  file_.reset();
}

// A dataset whose declared shape needs far more bytes than the file holds is damaged or truncated
// (or made up): refuse it before reading or allocating anything. Compressed data can be smaller
// than its shape, but not by more than a large factor.
void DatasetReader::check_declared_size(const std::string& key, int64_t declared_bytes,
                                        bool compressed) const {
  std::error_code error;
  const auto file_bytes = std::filesystem::file_size(path_, error);
  if (error) return;  // the open above succeeded: nothing more to learn here
  const double limit = compressed ? 1024.0 * double(file_bytes) : double(file_bytes);
  if (double(declared_bytes) > limit)
    fail(key, "declares " + std::to_string(declared_bytes) + " bytes of data (" +
                  std::to_string(size_) + " samples), but the file holds only " +
                  std::to_string(file_bytes) + " bytes: truncated or damaged");
}

void DatasetReader::open_inputs(const Shape& expected_sample_shape) {
  const std::string key = "/" + split_ + "/inputs";
  if (H5Lexists(file_.get(), key.c_str(), H5P_DEFAULT) <= 0) fail(key, "missing dataset");
  H5Handle probe(H5Dopen2(file_.get(), key.c_str(), H5P_DEFAULT), H5Dclose);
  if (!probe.valid()) fail(key, "not a dataset");

  H5Handle type(H5Dget_type(probe.get()), H5Tclose);
  const H5T_class_t cls = H5Tget_class(type.get());
  const size_t bytes = H5Tget_size(type.get());
  if (cls == H5T_INTEGER && bytes == 1 && H5Tget_sign(type.get()) == H5T_SGN_NONE) {
    inputs_are_float_ = false;
  } else if (cls == H5T_FLOAT && bytes == 4) {
    inputs_are_float_ = true;
  } else {
    fail(key, "element type must be uint8 or float32");
  }

  const Shape dims = dataset_dims(probe.get());
  if (dims.size() < 2) fail(key, "expected N x sample dimensions, found shape " + shape_str(dims));
  Shape sample(dims.begin() + 1, dims.end());
  if (!expected_sample_shape.empty() && sample != expected_sample_shape)
    fail(key, "samples have shape " + shape_str(sample) + " (dataset " + shape_str(dims) +
                  "), but the model expects " + shape_str(expected_sample_shape));
  size_ = dims[0];
  sample_shape_ = sample;
  sample_numel_ = shape_numel(sample);
  H5Handle dcpl(H5Dget_create_plist(probe.get()), H5Pclose);
  const bool filtered = H5Pget_nfilters(dcpl.get()) > 0;
  check_filters_available(key, dcpl.get());
  check_declared_size(key, size_ * sample_numel_ * int64_t(bytes), filtered);

  // Uncompressed chunks are read straight from the file (no chunk cache): shuffled rows touch a
  // different chunk almost every time, and caching a whole 1 MiB chunk for one 784-byte row
  // would read ~1000x more than needed. Filtered chunks must pass through the cache.
  probe.reset();
  H5Handle dapl(H5Pcreate(H5P_DATASET_ACCESS), H5Pclose);
  H5Pset_chunk_cache(dapl.get(), 12421, filtered ? size_t(64) << 20 : 0, 1.0);
  inputs_ = H5Handle(H5Dopen2(file_.get(), key.c_str(), dapl.get()), H5Dclose);
  if (!inputs_.valid()) fail(key, "cannot open dataset");
}

// A compression filter this HDF5 library lacks (h5py's lzf, a plugin's) would fail every read as
// if the file were damaged: name the filter instead, at open.
void DatasetReader::check_filters_available(const std::string& key, hid_t dcpl) const {
  const int filters = H5Pget_nfilters(dcpl);
  for (int i = 0; i < filters; ++i) {
    unsigned flags = 0, config = 0;
    size_t values = 0;
    char name[128] = "";
    const H5Z_filter_t id =
        H5Pget_filter2(dcpl, unsigned(i), &flags, &values, nullptr, sizeof name, name, &config);
    if (id >= 0 && H5Zfilter_avail(id) <= 0)
      fail(key, "compressed with filter " + std::to_string(id) +
                    (name[0] ? std::string(" (") + name + ")" : std::string()) +
                    ", which this HDF5 library cannot decode: write it with gzip or no "
                    "compression (docs/dataset-format.md)");
  }
}

void DatasetReader::read_attributes() {
  try {
    h5_read_attr_strings(file_.get(), "class_names", &class_names_);
    h5_read_attr_string(file_.get(), "source", &source_);
    int64_t tokens = 0;
    if (h5_read_attr_int(file_.get(), "token_ids", &tokens)) token_ids_ = tokens != 0;
  } catch (const std::exception& e) {
    fail("attributes", e.what());
  }
  read_scaling();
  int64_t declared = 0;
  if (h5_read_attr_int(file_.get(), "num_classes", &declared) && !class_names_.empty() &&
      int64_t(class_names_.size()) != declared)
    fail("class_names", std::to_string(class_names_.size()) + " names for num_classes " +
                            std::to_string(declared) + ": give one name per class");
  if (token_ids_ && inputs_are_float_)
    fail("token_ids", "token ids must be stored as uint8 inputs, found float32");
}

// `mean` and `std`: a number, or one value per channel or per element of a sample (per-feature
// scaling, expanded here to one value per element for convert_row).
void DatasetReader::read_scaling() {
  for (const char* key : {"mean", "std"}) {
    std::vector<double>& values = key[0] == 'm' ? means_ : stds_;
    try {
      h5_read_attr_doubles(file_.get(), key, &values);
    } catch (const std::exception& e) {
      fail(key, e.what());
    }
    check_scaling(key, values, key[0] == 's');
  }
  if (!per_feature_scaling() || token_ids_) return;
  element_mean_.resize(size_t(sample_numel_));
  element_inv_std_.resize(size_t(sample_numel_));
  for (int64_t e = 0; e < sample_numel_; ++e) {
    element_mean_[size_t(e)] = float(mean_of(e));
    element_inv_std_[size_t(e)] = float(1.0 / std_of(e));
  }
}

void DatasetReader::check_scaling(const char* key, const std::vector<double>& values,
                                  bool is_std) const {
  const int64_t n = int64_t(values.size());
  const bool per_channel = sample_shape_.size() >= 2 && n == sample_shape_[0];
  if (n != 1 && n != sample_numel_ && !per_channel)
    fail(key, std::to_string(n) + " values for samples of shape " + shape_str(sample_shape_) +
                  ": give one number, one per channel" +
                  (sample_shape_.size() >= 2 ? " (" + std::to_string(sample_shape_[0]) + ")" : "") +
                  " or one per element (" + std::to_string(sample_numel_) + ")");
  for (int64_t i = 0; i < n; ++i) {
    const double v = values[size_t(i)];
    const std::string which = n == 1 ? "" : " (value " + std::to_string(i) + ")";
    if (!std::isfinite(v))
      fail(key, std::string("normalisation ") + key + which + " is not finite (" +
                    (std::isnan(v) ? "NaN" : "Inf") + ")");
    if (is_std && !(v > 0.0)) {
      char found[32];
      std::snprintf(found, sizeof found, "%g", v);
      fail(key, "normalisation std" + which + " must be > 0, found " + found);
    }
  }
}

// Which of `values` applies to element e: the one value, e's channel's, or e's own.
size_t DatasetReader::scale_index(const std::vector<double>& values, int64_t e) const {
  const int64_t n = int64_t(values.size());
  if (n == 1) return 0;
  if (n == sample_numel_) return size_t(e);
  return size_t(e / (sample_numel_ / n));
}

void DatasetReader::load_labels(int classes) {
  const std::string key = "/" + split_ + "/labels";
  if (H5Lexists(file_.get(), key.c_str(), H5P_DEFAULT) <= 0) fail(key, "missing dataset");
  H5Handle labels(H5Dopen2(file_.get(), key.c_str(), H5P_DEFAULT), H5Dclose);
  if (!labels.valid()) fail(key, "not a dataset");
  H5Handle type(H5Dget_type(labels.get()), H5Tclose);
  if (H5Tget_class(type.get()) != H5T_INTEGER) fail(key, "labels must be integers (int32)");
  const Shape dims = dataset_dims(labels.get());
  if (dims.empty() || dims[0] != size_)
    fail(key, "expected shape [" + std::to_string(size_) + "] (or [" + std::to_string(size_) +
                  ", labels per sample...]) to match the inputs, found " + shape_str(dims));
  label_shape_.assign(dims.begin() + 1, dims.end());
  labels_per_sample_ = shape_numel(label_shape_);
  if (labels_per_sample_ <= 0) fail(key, "empty per-sample label shape " + shape_str(dims));

  // Streamed in blocks of rows so a damaged label is reported with its row, not after one huge
  // read.
  const size_t per = size_t(labels_per_sample_);
  {
    H5Handle dcpl(H5Dget_create_plist(labels.get()), H5Pclose);
    check_declared_size(key, size_ * labels_per_sample_ * 4, H5Pget_nfilters(dcpl.get()) > 0);
  }
  try {
    labels_.resize(static_cast<size_t>(size_) * per);
  } catch (const std::bad_alloc&) {
    throw OutOfMemory(path_ + ": " + key + ": the labels need " +
                      std::to_string(size_ * labels_per_sample_ * 4) +
                      " bytes of host memory, which this process cannot get");
  }
  H5Handle file_space(H5Dget_space(labels.get()), H5Sclose);
  const int64_t block = std::max<int64_t>(1, (int64_t(1) << 16) / labels_per_sample_);
  std::vector<hsize_t> offset(dims.size(), 0), count(dims.begin(), dims.end());
  for (int64_t start = 0; start < size_; start += block) {
    offset[0] = static_cast<hsize_t>(start);
    count[0] = static_cast<hsize_t>(std::min(block, size_ - start));
    H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, offset.data(), nullptr, count.data(),
                        nullptr);
    H5Handle mem_space(H5Screate_simple(int(count.size()), count.data(), nullptr), H5Sclose);
    if (H5Dread(labels.get(), H5T_NATIVE_INT32, mem_space.get(), file_space.get(), H5P_DEFAULT,
                labels_.data() + size_t(start) * per) < 0)
      fail(key, "cannot read labels (damaged file?)");
    for (size_t i = size_t(start) * per; i < (size_t(start) + count[0]) * per; ++i) {
      const int32_t y = labels_[i];
      if (y < 0 || (classes > 0 && y >= classes))
        fail(key, "label " + std::to_string(y) + " at row " + std::to_string(i / per) +
                      " is outside the class range [0, " + std::to_string(classes) + ")");
    }
  }
}

void DatasetReader::read(const std::vector<int64_t>& rows, float* inputs, int32_t* labels) {
  const size_t per_row = size_t(sample_numel_);
  read_rows(
      rows, labels, !inputs ? RowSink() : [&](size_t i, const uint8_t* raw) {
        convert_row(raw, inputs + i * per_row);
      });
}

void DatasetReader::read_raw(const std::vector<int64_t>& rows, uint8_t* raw, int32_t* labels) {
  if (inputs_are_float_ || u8_group_ == 0)
    throw std::logic_error("read_raw: " + path_ + " has no uint8 table (float32 inputs, or " +
                           "per-element scaling too large for one)");
  const size_t row_bytes = size_t(sample_numel_);
  read_rows(
      rows, labels, !raw ? RowSink() : [&](size_t i, const uint8_t* row) {
        std::memcpy(raw + i * row_bytes, row, row_bytes);
      });
}

void DatasetReader::dequantize(const uint8_t* raw, int64_t rows, float* out) const {
  const size_t per_row = size_t(sample_numel_);
  for (size_t i = 0; i < size_t(rows); ++i) convert_row(raw + i * per_row, out + i * per_row);
}

void DatasetReader::read_rows(const std::vector<int64_t>& rows, int32_t* labels,
                              const RowSink& each) {
  const size_t n = rows.size();
  for (int64_t r : rows)
    if (r < 0 || r >= size_)
      throw std::out_of_range("dataset row " + std::to_string(r) + " outside [0, " +
                              std::to_string(size_) + ") of " + path_);
  if (labels) {
    const size_t per = size_t(labels_per_sample_);
    for (size_t i = 0; i < n; ++i)
      std::copy_n(labels_.data() + size_t(rows[i]) * per, per, labels + i * per);
  }
  if (!each || n == 0) return;

  const size_t per_row = size_t(sample_numel_);
  if (path_in_use_ == ReadPath::Mapped) {
    read_mapped(rows, each);
    return;
  }
  // The staging buffers are shared by every caller of this reader (the preload thread and the
  // main thread may both read): one staged read at a time.
  std::lock_guard<std::mutex> lock(staging_mutex_);
  staged_at_.resize(n);
  try {
    if (path_in_use_ == ReadPath::Pread)
      stage_direct(rows);
    else
      stage_hdf5(rows);
  } catch (const InputError&) {
    check_unchanged();  // a read that failed because the file changed says so
    throw;
  }
  check_unchanged();  // HDF5 reads zeros past the end of a truncated file, without an error
  const size_t row_bytes = per_row * (inputs_are_float_ ? 4 : 1);
  for (size_t i = 0; i < n; ++i) each(i, staging_.data() + staged_at_[i] * row_bytes);
}

// Straight from the mapped file, no staging copy. Truncation makes the map fault (SIGBUS) at the
// first page past the new end; a rewrite in place changes the bytes under it: either way the
// file's stamp differs afterwards, and the read throws.
void DatasetReader::read_mapped(const std::vector<int64_t>& rows, const RowSink& each) {
  const bool read = guarded_mapped_read(map_, map_bytes_, [&] {
    for (size_t i = 0; i < rows.size(); ++i) each(i, map_ + locator_.offset(rows[i]));
  });
  check_unchanged(read ? "" : "reading its mapped rows failed with SIGBUS (an I/O error?)");
}

// Normalises one raw row: uint8 through the lookup table, float32 as (x - mean) / std; under
// per-feature scaling, each element with its own mean and std.
void DatasetReader::convert_row(const uint8_t* raw, float* out) const {
  const size_t per_row = size_t(sample_numel_);
  if (!inputs_are_float_ && u8_group_ > 0) {
    // Group by group, one table each: no integer division per element (with it, the preload
    // thread spent about 1.7x the CPU per mlp batch: bench/step_phases.sh).
    const size_t group = size_t(u8_group_);
    for (size_t begin = 0, g = 0; begin < per_row; begin += group, ++g) {
      const float* table = u8_table_.data() + g * 256;
      const size_t end = std::min(per_row, begin + group);
      for (size_t e = begin; e < end; ++e) out[e] = table[raw[e]];
    }
  } else if (!element_mean_.empty()) {
    const float* mean = element_mean_.data();
    const float* inv_std = element_inv_std_.data();
    float value;
    for (size_t e = 0; e < per_row; ++e) {
      if (inputs_are_float_)
        std::memcpy(&value, raw + e * sizeof(float), sizeof(float));  // may be unaligned
      else
        value = float(raw[e]) * (1.0f / 255.0f);
      out[e] = (value - mean[e]) * inv_std[e];
    }
  } else if (inputs_are_float_) {
    const float mean = float(this->mean()), inv_std = float(1.0 / std_dev());
    float value;
    for (size_t e = 0; e < per_row; ++e) {
      std::memcpy(&value, raw + e * sizeof(float), sizeof(float));  // mapped rows may be unaligned
      out[e] = (value - mean) * inv_std;
    }
  }
}

// uint8 inputs through one lookup per element: a table of 256 floats per scaling group (the
// sample under global scaling, a channel, or an element), made here with convert_row's own
// arithmetic, so a device that dequantises through it (read_raw) gets the host's floats.
void DatasetReader::build_u8_table() {
  u8_group_ = 0;
  u8_table_.clear();
  if (inputs_are_float_) return;
  if (element_mean_.empty()) {  // global scaling, or token ids (their values)
    u8_group_ = std::max<int64_t>(1, sample_numel_);
    u8_table_.resize(256);
    for (int v = 0; v < 256; ++v)
      u8_table_[size_t(v)] =
          token_ids_ ? float(v) : static_cast<float>((v / 255.0 - mean()) / std_dev());
    return;
  }
  const int64_t channels = sample_shape_.size() >= 2 ? sample_shape_[0] : 1;
  int64_t group = channels > 0 && sample_numel_ % channels == 0 ? sample_numel_ / channels : 1;
  for (int64_t e = 0; e < sample_numel_ && group > 1; ++e) {
    const size_t first = size_t(e / group * group);
    if (element_mean_[size_t(e)] != element_mean_[first] ||
        element_inv_std_[size_t(e)] != element_inv_std_[first])
      group = 1;  // per element
  }
  const int64_t groups = sample_numel_ / group;
  if (groups * 256 * int64_t(sizeof(float)) > (int64_t(64) << 20)) return;  // too large: no table
  u8_group_ = group;
  u8_table_.resize(size_t(groups) * 256);
  for (int64_t g = 0; g < groups; ++g) {
    const float mean = element_mean_[size_t(g * group)];
    const float inv_std = element_inv_std_[size_t(g * group)];
    for (int v = 0; v < 256; ++v) {
      const float value = float(v) * (1.0f / 255.0f);
      u8_table_[size_t(g * 256 + v)] = (value - mean) * inv_std;
    }
  }
}

void DatasetReader::stage_direct(const std::vector<int64_t>& rows) {
  // Rows staged in request order; runs of consecutive rows within one chunk take one pread.
  const size_t n = rows.size();
  const size_t row_bytes = size_t(locator_.row_bytes());
  if (staging_.size() < n * row_bytes) staging_.resize(n * row_bytes);
  for (size_t i = 0; i < n;) {
    const int64_t limit = locator_.contiguous_rows_from(rows[i]);
    size_t j = i + 1;
    while (j < n && int64_t(j - i) < limit && rows[j] == rows[j - 1] + 1) ++j;
    uint8_t* dst = staging_.data() + i * row_bytes;
    const size_t want = (j - i) * row_bytes;
    off_t at = off_t(locator_.offset(rows[i]));
    size_t got = 0;
    while (got < want) {
      const ssize_t r = ::pread(fd_, dst + got, want - got, at + off_t(got));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0)
        throw InputError(path_, 0, "/" + split_ + "/inputs",
                         "reading rows " + std::to_string(rows[i]) + ".." +
                             std::to_string(rows[j - 1]) + " failed (" +
                             (r < 0 ? std::strerror(errno) : "file truncated") + ")");
      got += size_t(r);
    }
    for (size_t k = i; k < j; ++k) staged_at_[k] = k;
    i = j;
  }
}

void DatasetReader::stage_hdf5(const std::vector<int64_t>& rows) {
  // Sort the requested rows and coalesce consecutive ones into runs (one hyperslab each), read
  // them into the staging buffer in row order; staged_at_ maps each request to its copy.
  const size_t n = rows.size();
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t(0));
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return rows[a] < rows[b]; });
  std::vector<int64_t> unique_rows;
  unique_rows.reserve(n);
  for (size_t k = 0; k < n; ++k) {
    const int64_t r = rows[order[k]];
    if (unique_rows.empty() || unique_rows.back() != r) unique_rows.push_back(r);
    staged_at_[order[k]] = unique_rows.size() - 1;
  }

  const size_t value_bytes = inputs_are_float_ ? 4 : 1;
  const size_t row_bytes = size_t(sample_numel_) * value_bytes;
  if (staging_.size() < unique_rows.size() * row_bytes)
    staging_.resize(unique_rows.size() * row_bytes);
  {
    // One H5Dread per run, with a memory space of the run's own shape. HDF5 1.10 maps a
    // selection onto chunks element by element (H5S_select_iterate, ~30 us per 784-byte row)
    // unless file and memory selections have the same shape; an OR-ed multi-run selection read
    // into a flat buffer never does, so per-run reads were 8x cheaper in CPU time here.
    Lock lock(hdf5_mutex());
    H5Handle file_space(H5Dget_space(inputs_.get()), H5Sclose);
    const int rank = 1 + static_cast<int>(sample_shape_.size());
    std::vector<hsize_t> start(static_cast<size_t>(rank), 0);
    std::vector<hsize_t> count(static_cast<size_t>(rank), 0);
    for (size_t d = 0; d < sample_shape_.size(); ++d) count[d + 1] = hsize_t(sample_shape_[d]);
    const hid_t mem_type = inputs_are_float_ ? H5T_NATIVE_FLOAT : H5T_NATIVE_UINT8;
    for (size_t i = 0; i < unique_rows.size();) {
      size_t j = i + 1;
      while (j < unique_rows.size() && unique_rows[j] == unique_rows[j - 1] + 1) ++j;
      start[0] = hsize_t(unique_rows[i]);
      count[0] = hsize_t(j - i);
      H5Handle mem_space(H5Screate_simple(rank, count.data(), nullptr), H5Sclose);
      if (H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(),
                              nullptr) < 0 ||
          H5Dread(inputs_.get(), mem_type, mem_space.get(), file_space.get(), H5P_DEFAULT,
                  staging_.data() + i * row_bytes) < 0)
        throw InputError(path_, 0, "/" + split_ + "/inputs",
                         "reading rows " + std::to_string(unique_rows[i]) + ".." +
                             std::to_string(unique_rows[j - 1]) +
                             " failed (damaged or truncated file?)");
      i = j;
    }
  }
}

}  // namespace wt

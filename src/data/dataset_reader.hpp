#pragma once
// Reads one split of a wavetrain HDF5 dataset (ARCHITECTURE.md "Data formats"), read-only.
// Each read fetches only the requested rows (hyperslab selections), never the whole dataset,
// so every rank reads its own shard straight from the file (ScaleDNN).
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "data/row_locator.hpp"
#include "tensor/tensor.hpp"
#include "util/hdf5_util.hpp"

namespace wt {

class DatasetReader {
 public:
  // Validates everything a training run relies on: the file exists and is HDF5;
  // /<split>/inputs and /<split>/labels exist; inputs are uint8 or float32 with the rank and
  // sample shape `expected_sample_shape` (e.g. {1, 28, 28}); labels are integers [N] or
  // [N, label dims...] (per-token labels), each in [0, classes). An empty expected shape accepts
  // the file's; classes <= 0 takes the file's num_classes attribute (if any). Any problem throws
  // wt::InputError(path, 0, key, message).
  DatasetReader(const std::string& path, const std::string& split,
                const Shape& expected_sample_shape, int classes);
  ~DatasetReader();
  DatasetReader(const DatasetReader&) = delete;
  DatasetReader& operator=(const DatasetReader&) = delete;

  int64_t size() const { return size_; }
  Shape sample_shape() const { return sample_shape_; }
  bool inputs_are_float() const { return inputs_are_float_; }  // float32 inputs, else uint8
  int64_t sample_numel() const { return sample_numel_; }
  // Labels per sample: 1 for classification ([N] labels), T for per-token labels ([N, T]).
  Shape label_shape() const { return label_shape_; }
  int64_t labels_per_sample() const { return labels_per_sample_; }
  // True when the file says its uint8 inputs are token ids (attribute token_ids = 1): read() then
  // returns the ids themselves as floats, without normalisation.
  bool token_ids() const { return token_ids_; }
  const std::string& path() const { return path_; }
  // The file's num_classes attribute, 0 when it has none.
  int64_t declared_classes() const { return declared_classes_; }
  const std::string& split() const { return split_; }

  // File attributes (defaults when absent: mean 0, std 1, no names, empty source).
  // `mean` and `std` are each a number (global scaling) or a 1-D array: one value per channel
  // (the sample's first dimension, for samples of 2 or more dimensions) or one per element of a
  // sample (per feature); means() and stds() hold them as stored. mean() and std_dev() are the
  // first values (the only ones under global scaling).
  double mean() const { return means_[0]; }
  double std_dev() const { return stds_[0]; }
  const std::vector<double>& means() const { return means_; }
  const std::vector<double>& stds() const { return stds_; }
  bool per_feature_scaling() const { return means_.size() > 1 || stds_.size() > 1; }
  // The mean and std applied to element `e` of a sample (e in [0, sample_numel())).
  double mean_of(int64_t e) const { return means_[scale_index(means_, e)]; }
  double std_of(int64_t e) const { return stds_[scale_index(stds_, e)]; }
  const std::vector<std::string>& class_names() const { return class_names_; }
  const std::string& source() const { return source_; }

  // Reads the given rows (any order, repeats allowed) and writes normalised floats
  // [rows.size(), sample_shape...] to `inputs` and their labels, labels_per_sample() per row, to
  // `labels` (either may be null).
  // uint8 inputs become (x/255 - mean)/std, float32 inputs (x - mean)/std, with each element's
  // own mean and std under per-feature scaling.
  // Rows outside [0, size()) throw std::out_of_range. Not safe to call concurrently on one
  // reader; HDF5 calls take hdf5_mutex(), so different readers may run on different threads.
  void read(const std::vector<int64_t>& rows, float* inputs, int32_t* labels);
  // The same rows as stored, sample_numel() bytes each, for a device that normalises them
  // (uint8 inputs with a table only: has_u8_table()): element e of a row becomes
  // u8_table()[(e / u8_group()) * 256 + byte], read()'s float bit for bit.
  void read_raw(const std::vector<int64_t>& rows, uint8_t* raw, int32_t* labels);
  bool has_u8_table() const { return u8_group_ > 0; }
  const std::vector<float>& u8_table() const { return u8_table_; }
  int64_t u8_group() const { return u8_group_; }
  // read_raw's rows as read() gives them: `rows` samples.
  void dequantize(const uint8_t* raw, int64_t rows, float* out) const;

  // Uncompressed datasets are read straight from the file at the addresses RowLocator finds:
  // through a read-only memory map (no system call per row; only the pages of rows actually read
  // are ever brought in), or pread() where mapping fails. Filtered datasets, and any the locator
  // rejects, go through H5Dread. All paths give identical results.
  //
  // A file changed under the job (truncated, or rewritten in place by a converter) is an
  // InputError naming the file and saying it changed while the job ran, on every path: each read
  // compares the file's size and modification time with those it had when opened (one fstat), and
  // a read of the map that the truncation makes fault (SIGBUS) is caught
  // (data/mapped_read_guard.hpp). A file replaced by rename is not a change: the reader keeps
  // reading the file it opened.
  enum class ReadPath { Hdf5, Pread, Mapped };
  ReadPath read_path() const { return path_in_use_; }
  // Why the direct paths are unavailable (empty when they are available).
  const std::string& direct_reads_unavailable_because() const { return no_direct_reason_; }
  // Chooses the path for later reads, e.g. to compare them; a path that is unavailable falls back
  // to the next one down (Mapped -> Pread -> Hdf5). Returns the path now in use.
  ReadPath set_read_path(ReadPath wanted);

 private:
  [[noreturn]] void fail(const std::string& key, const std::string& message) const;
  [[noreturn]] void fail_locked_or(const std::string& message) const;
  // Throws if the file's size or modification time differ from those at open (a read that failed
  // failed because of the change); `failed`: a read already failed for a reason of its own: it
  // throws that in any case.
  void check_unchanged(const std::string& failed = "") const;
  // Calls `each(i, raw row)` for rows[i], i in order, after the labels are copied.
  using RowSink = std::function<void(size_t, const uint8_t*)>;
  void read_rows(const std::vector<int64_t>& rows, int32_t* labels, const RowSink& each);
  void read_mapped(const std::vector<int64_t>& rows, const RowSink& each);
  void build_u8_table();
  void open(const Shape& expected_sample_shape, int classes);
  void open_inputs(const Shape& expected_sample_shape);
  void check_filters_available(const std::string& key, hid_t dcpl) const;
  void check_declared_size(const std::string& key, int64_t declared_bytes, bool compressed) const;
  void load_labels(int classes);
  void read_attributes();
  void read_scaling();
  void check_scaling(const char* key, const std::vector<double>& values, bool is_std) const;
  size_t scale_index(const std::vector<double>& values, int64_t e) const;
  void open_direct();
  // Fill staging_ with the raw bytes of the requested rows; staged_at_[i] is rows[i]'s position.
  void stage_direct(const std::vector<int64_t>& rows);
  void stage_hdf5(const std::vector<int64_t>& rows);
  void convert_row(const uint8_t* raw, float* out) const;

  std::string path_, split_;
  int64_t declared_classes_ = 0;
  H5Handle file_, inputs_;
  bool inputs_are_float_ = false;
  int64_t size_ = 0;
  Shape sample_shape_;
  int64_t sample_numel_ = 0;
  std::vector<int32_t> labels_;  // validated once at open; small next to the inputs
  Shape label_shape_;
  int64_t labels_per_sample_ = 1;
  bool token_ids_ = false;
  std::vector<double> means_{0.0}, stds_{1.0};
  std::vector<float> element_mean_, element_inv_std_;  // per element, under per-feature scaling
  std::vector<std::string> class_names_;
  std::string source_;
  std::vector<float> u8_table_;   // uint8 -> normalised float, 256 per scaling group
  int64_t u8_group_ = 0;          // elements per group; 0: no table
  std::vector<uint8_t> staging_;  // raw rows of the last read
  std::vector<size_t> staged_at_;
  std::mutex staging_mutex_;  // guards staging_ and staged_at_
  RowLocator locator_;
  int fd_ = -1;  // plain descriptor of the same file: its stamp, and pread for direct reads
  int64_t opened_size_ = -1;  // the file's size and modification time when opened
  int64_t opened_mtime_ns_ = 0;
  const uint8_t* map_ = nullptr;  // the file mapped read-only, or null (then pread)
  size_t map_bytes_ = 0;
  ReadPath best_path_ = ReadPath::Hdf5, path_in_use_ = ReadPath::Hdf5;
  std::string no_direct_reason_;
};

}  // namespace wt

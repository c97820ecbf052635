#pragma once
// Writes a wavetrain HDF5 dataset (ARCHITECTURE.md "Data formats"): /<split>/inputs
// (N x sample_shape, uint8 or float32, chunked by sample ranges), /<split>/labels (N x label_shape,
// int32) and the file attributes num_classes, class_names, mean, std, source (and token_ids). Used
// by the converters in tools/ and by tests that need a small dataset. The file appears atomically:
// it is written under a temporary name, flushed to disk and renamed.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tensor/tensor.hpp"

namespace wt {

struct DatasetSplit {
  std::string name;                // "train", "test", ...
  Shape sample_shape;              // e.g. {1, 28, 28}
  std::vector<uint8_t> inputs_u8;  // N * numel(sample_shape) values, or empty when float
  std::vector<float> inputs_f32;   // used instead of inputs_u8 for float32 datasets
  std::vector<int32_t> labels;     // N * numel(label_shape)
  Shape label_shape;          // per-sample label shape, e.g. {T} for per-token labels; {} = one
  int64_t chunk_samples = 0;  // samples per chunk; 0 = about 1 MiB per chunk
};

struct DatasetInfo {
  int64_t num_classes = 0;
  std::vector<std::string> class_names;  // empty or num_classes names
  double mean = 0.0;                     // x_float = (x/255 - mean)/std for uint8 inputs
  double std = 1.0;
  std::string source;  // provenance
  // Inputs are uint8 token ids, read as the ids themselves (no /255, no mean/std); written as the
  // file attribute token_ids = 1.
  bool token_ids = false;
};

// Throws std::invalid_argument for inconsistent arguments, std::runtime_error when HDF5 or the
// file system fails. An existing file at `path` is replaced only once the new one is complete.
void write_dataset(const std::string& path, const std::vector<DatasetSplit>& splits,
                   const DatasetInfo& info);

}  // namespace wt

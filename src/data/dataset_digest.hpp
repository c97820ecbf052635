#pragma once
// A dataset's identity as a job reads it, in a fixed number of 32-bit words, so that the ranks of
// a job can check cheaply that they read the same data (two copies on different nodes, one of them
// stale, must not meet as a deadlock at the shorter copy's epoch boundary).
//
// It holds what a run depends on: per split the sample count, sample shape, element type and labels
// per sample; a checksum of the file's attributes (normalisation, classes, names, source); and a
// checksum of the labels of every row and the inputs of a fixed sample of rows (kSampledRows per
// split, spread evenly and including the first and last row). Two copies that differ only in the
// inputs of rows outside the sample compare equal: the price of reading a few dozen rows instead
// of the whole file. The file's path and size are deliberately not part of it: copies at different
// paths, or written by another HDF5 version, are the same data.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace wt {

class DatasetReader;

struct SplitDigest {
  static constexpr int kMaxDims = 6;  // sample dimensions recorded (more are folded into the last)
  int64_t samples = 0;
  int64_t is_float = 0;  // 0: uint8 inputs, 1: float32
  int64_t dims = 0;      // sample rank
  std::array<int64_t, kMaxDims> shape{};
  int64_t labels_per_sample = 0;
  bool operator==(const SplitDigest& o) const {
    return samples == o.samples && is_float == o.is_float && dims == o.dims && shape == o.shape &&
           labels_per_sample == o.labels_per_sample;
  }
};

struct DatasetDigest {
  static constexpr int kSampledRows = 64;
  SplitDigest train, test;
  uint64_t attributes = 0;  // checksum of the file's attributes
  uint64_t rows = 0;        // checksum of all labels and the sampled rows' inputs (both splits)

  bool operator==(const DatasetDigest& o) const {
    return train == o.train && test == o.test && attributes == o.attributes && rows == o.rows;
  }
  bool operator!=(const DatasetDigest& o) const { return !(*this == o); }

  // The fixed-size form that travels between ranks, and back.
  static constexpr int kWords = 2 * (2 * (4 + SplitDigest::kMaxDims) + 2);  // 64-bit fields
  std::array<uint32_t, kWords> words() const;
  static DatasetDigest from_words(const std::array<uint32_t, kWords>& words);

  // "train 60000 x [1, 28, 28] uint8, test 10000 x [1, 28, 28] uint8, attributes 1a2b..,
  // rows 3c4d.."
  std::string describe() const;
};

// Reads the sampled rows of both splits (a few dozen rows each) and the readers' attributes.
// Throws what the readers throw.
DatasetDigest dataset_digest(DatasetReader& train, DatasetReader& test);

// What differs between two digests, e.g. "train samples 60000 vs 500; rows checksum a.. vs b..";
// empty when they are equal.
std::string digest_differences(const DatasetDigest& a, const DatasetDigest& b);

}  // namespace wt

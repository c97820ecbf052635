#pragma once
// Where each row of an uncompressed HDF5 dataset lies in the file, so rows can be read with
// pread() instead of H5Dread. A shuffled batch touches a different chunk for almost every row, and
// one H5Dread costs ~10 us of library overhead per row; pread of the same 784 bytes costs ~1 us.
// Only layouts whose bytes on disk are exactly the rows in memory qualify: contiguous or chunked
// (each chunk spanning whole samples) storage, no filters, a native element type, no user block.
#include <hdf5.h>

#include <cstdint>
#include <string>
#include <vector>

namespace wt {

class RowLocator {
 public:
  // Inspects `dset` (rows x sample dims, elements of `element_type`, which must be a native type)
  // of `file`. Returns true and fills *out when every row can be read directly; otherwise returns
  // false with the reason in *why. Caller holds hdf5_mutex().
  static bool locate(hid_t file, hid_t dset, hid_t element_type, RowLocator* out, std::string* why);

  // File offset of the first byte of `row`.
  int64_t offset(int64_t row) const {
    return chunk_addr_[size_t(row / chunk_rows_)] + (row % chunk_rows_) * row_bytes_;
  }
  // Rows from `row` on that lie consecutively in the file (up to the end of its chunk).
  int64_t contiguous_rows_from(int64_t row) const { return chunk_rows_ - row % chunk_rows_; }
  int64_t row_bytes() const { return row_bytes_; }
  // One past the last byte of row data: a file shorter than this is truncated.
  int64_t end_offset() const { return end_offset_; }

 private:
  int64_t row_bytes_ = 0;
  int64_t end_offset_ = 0;
  int64_t chunk_rows_ = 1;           // all rows for contiguous storage
  std::vector<int64_t> chunk_addr_;  // file address of each chunk, by chunk index
};

}  // namespace wt

#include "data/row_locator.hpp"

#include <algorithm>
#include <vector>

#include "util/hdf5_util.hpp"

namespace wt {

bool RowLocator::locate(hid_t file, hid_t dset, hid_t element_type, RowLocator* out,
                        std::string* why) {
  auto reject = [why](const char* reason) {
    *why = reason;
    return false;
  };
  H5Handle fcpl(H5Fget_create_plist(file), H5Pclose);
  hsize_t userblock = 0;
  if (!fcpl.valid() || H5Pget_userblock(fcpl.get(), &userblock) < 0 || userblock != 0)
    return reject("file has a user block");
  H5Handle type(H5Dget_type(dset), H5Tclose);
  if (H5Tequal(type.get(), element_type) <= 0) return reject("element type is not native");
  H5Handle dcpl(H5Dget_create_plist(dset), H5Pclose);
  if (H5Pget_nfilters(dcpl.get()) != 0) return reject("dataset is filtered (compressed)");

  H5Handle space(H5Dget_space(dset), H5Sclose);
  const int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank < 1) return reject("dataset has no rows");
  std::vector<hsize_t> dims(size_t(rank), 0);
  H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
  const int64_t rows = int64_t(dims[0]);
  RowLocator loc;
  loc.row_bytes_ = int64_t(H5Tget_size(type.get()));
  for (int d = 1; d < rank; ++d) loc.row_bytes_ *= int64_t(dims[size_t(d)]);
  if (rows == 0 || loc.row_bytes_ == 0) return reject("dataset is empty");

  const H5D_layout_t layout = H5Pget_layout(dcpl.get());
  if (layout == H5D_CONTIGUOUS) {
    const haddr_t addr = H5Dget_offset(dset);
    if (addr == HADDR_UNDEF) return reject("contiguous storage not allocated");
    loc.chunk_rows_ = rows;
    loc.chunk_addr_.push_back(int64_t(addr));
  } else if (layout == H5D_CHUNKED) {
    std::vector<hsize_t> chunk(size_t(rank), 0);
    if (H5Pget_chunk(dcpl.get(), rank, chunk.data()) != rank) return reject("unreadable chunking");
    for (int d = 1; d < rank; ++d)
      if (chunk[size_t(d)] != dims[size_t(d)]) return reject("chunks split samples");
    loc.chunk_rows_ = int64_t(chunk[0]);
    const hsize_t chunk_bytes = hsize_t(loc.chunk_rows_ * loc.row_bytes_);
    std::vector<hsize_t> coord(size_t(rank), 0);
    for (int64_t first = 0; first < rows; first += loc.chunk_rows_) {
      coord[0] = hsize_t(first);
      unsigned filter_mask = 0;
      haddr_t addr = HADDR_UNDEF;
      hsize_t size = 0;
      // By coordinate, not by index: H5Dget_chunk_info walks the index for every call.
      if (H5Dget_chunk_info_by_coord(dset, coord.data(), &filter_mask, &addr, &size) < 0 ||
          addr == HADDR_UNDEF || size != chunk_bytes)
        return reject("a chunk is missing or not stored raw");
      loc.chunk_addr_.push_back(int64_t(addr));
    }
  } else {
    return reject("compact or virtual layout");
  }
  for (int64_t addr : loc.chunk_addr_)
    loc.end_offset_ = std::max(loc.end_offset_, addr + loc.chunk_rows_ * loc.row_bytes_);
  if (layout == H5D_CONTIGUOUS) loc.end_offset_ = loc.chunk_addr_[0] + rows * loc.row_bytes_;
  *out = std::move(loc);
  return true;
}

}  // namespace wt

#pragma once
// Reader for the idx format of MNIST-style datasets (LeCun's ubyte files), plain or gzipped:
// 0x00 0x00, a type byte (only 0x08 = unsigned byte is accepted), a dimension count, the
// big-endian uint32 dimensions, then the row-major data.
#include <cstdint>
#include <string>
#include <vector>

namespace wt {

struct IdxArray {
  std::vector<int64_t> dims;
  std::vector<uint8_t> data;  // product(dims) bytes
};

// Throws wt::InputError(path, 0, "", message) for a missing, truncated or malformed file.
IdxArray read_idx(const std::string& path);

}  // namespace wt

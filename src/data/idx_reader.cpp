#include "data/idx_reader.hpp"

#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "util/input_error.hpp"

namespace wt {

namespace {

// gzread reads gzip and, transparently, uncompressed files, so .gz and plain idx both work.
struct GzFile {
  explicit GzFile(const std::string& path) : handle(gzopen(path.c_str(), "rb")) {}
  ~GzFile() {
    if (handle) gzclose(handle);
  }
  // Reads exactly `bytes` bytes; false on a short read or a decompression error.
  bool read_exact(void* out, size_t bytes) {
    auto* p = static_cast<unsigned char*>(out);
    while (bytes > 0) {
      const unsigned step = static_cast<unsigned>(std::min<size_t>(bytes, 1u << 30));
      const int got = gzread(handle, p, step);
      if (got <= 0) return false;
      p += got;
      bytes -= size_t(got);
    }
    return true;
  }
  gzFile handle;
};

}  // namespace

IdxArray read_idx(const std::string& path) {
  auto fail = [&](const std::string& message) { throw InputError(path, 0, "", message); };
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) fail("idx file not found");
  GzFile file(path);
  if (!file.handle) fail("cannot open idx file");

  unsigned char header[4];
  if (!file.read_exact(header, 4)) fail("too short for an idx header");
  if (header[0] != 0 || header[1] != 0) fail("not an idx file (the first two bytes must be zero)");
  if (header[2] != 0x08) {
    char type[8];
    std::snprintf(type, sizeof type, "0x%02x", header[2]);
    fail(std::string("idx element type ") + type + " is not supported (only 0x08, unsigned byte)");
  }
  const int ndims = header[3];
  if (ndims < 1) fail("idx file with no dimensions");

  IdxArray array;
  uint64_t total = 1;
  for (int d = 0; d < ndims; ++d) {
    unsigned char b[4];
    if (!file.read_exact(b, 4)) fail("truncated idx header");
    const uint64_t dim =
        (uint64_t(b[0]) << 24) | (uint64_t(b[1]) << 16) | (uint64_t(b[2]) << 8) | b[3];
    total *= dim;
    if (total > (uint64_t(1) << 34)) fail("idx dimensions describe more than 16 GiB of data");
    array.dims.push_back(int64_t(dim));
  }
  array.data.resize(total);
  if (total > 0 && !file.read_exact(array.data.data(), total))
    fail("truncated idx data: expected " + std::to_string(total) + " bytes after the header");
  unsigned char extra;
  if (gzread(file.handle, &extra, 1) > 0) fail("unexpected bytes after the idx data");
  return array;
}

}  // namespace wt

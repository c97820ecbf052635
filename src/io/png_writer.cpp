#include "io/png_writer.hpp"

#include <zlib.h>

#include <cstdint>
#include <limits>
#include <stdexcept>

#include "io/checked_file.hpp"

namespace wt {

namespace {

void append_u32(std::string& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out += char((v >> shift) & 0xff);
}

// Length, type, data, and the CRC-32 of type and data (PNG's CRC is zlib's).
void append_chunk(std::string& out, const char type[4], const std::string& data) {
  if (data.size() > uint32_t(std::numeric_limits<int32_t>::max()))
    throw std::runtime_error("PNG chunk of " + std::to_string(data.size()) + " bytes: too large");
  append_u32(out, uint32_t(data.size()));
  const size_t start = out.size();
  out.append(type, 4);
  out += data;
  const auto* typed = reinterpret_cast<const Bytef*>(out.data() + start);
  append_u32(out, uint32_t(crc32(crc32(0L, Z_NULL, 0), typed, uInt(out.size() - start))));
}

std::string header(const RgbImage& image) {
  std::string ihdr;
  append_u32(ihdr, uint32_t(image.width()));
  append_u32(ihdr, uint32_t(image.height()));
  ihdr += char(8);  // bits per channel
  ihdr += char(2);  // colour type: truecolour (RGB)
  ihdr += char(0);  // compression: deflate
  ihdr += char(0);  // filtering: the adaptive set (we use its "None" on every row)
  ihdr += char(0);  // not interlaced
  return ihdr;
}

// Each row behind its filter-type byte (0: None). Flat-coloured figures deflate well unfiltered.
std::string compressed_rows(const RgbImage& image) {
  const size_t row_bytes = size_t(image.width()) * 3;
  std::string raw;
  raw.reserve((row_bytes + 1) * size_t(image.height()));
  const char* pixels = reinterpret_cast<const char*>(image.bytes().data());
  for (int y = 0; y < image.height(); ++y) {
    raw += char(0);
    raw.append(pixels + size_t(y) * row_bytes, row_bytes);
  }
  uLongf size = compressBound(uLong(raw.size()));
  std::string out(size, '\0');
  const int status = compress2(reinterpret_cast<Bytef*>(&out[0]), &size,
                               reinterpret_cast<const Bytef*>(raw.data()), uLong(raw.size()),
                               Z_DEFAULT_COMPRESSION);
  if (status != Z_OK)
    throw std::runtime_error("cannot compress a " + std::to_string(image.width()) + "x" +
                             std::to_string(image.height()) + " PNG: zlib status " +
                             std::to_string(status));
  out.resize(size);
  return out;
}

}  // namespace

std::string encode_png(const RgbImage& image) {
  std::string out("\x89PNG\r\n\x1a\n", 8);
  append_chunk(out, "IHDR", header(image));
  append_chunk(out, "IDAT", compressed_rows(image));
  append_chunk(out, "IEND", "");
  return out;
}

void write_png(const std::string& path, const RgbImage& image) {
  write_file_atomically(path, encode_png(image));
}

}  // namespace wt

#pragma once
// PNG files of an RgbImage, so that wavetrain can draw a figure (--evaluate's confusion matrix)
// without a plotting library: 8-bit truecolour, not interlaced, every row unfiltered, the image
// data one zlib stream in one IDAT chunk.
#include <string>

#include "io/rgb_image.hpp"

namespace wt {

// The file's bytes. Throws std::runtime_error if zlib fails (out of memory).
std::string encode_png(const RgbImage& image);

// Encodes and writes through path.tmp and a rename (write_file_atomically): a failure leaves no
// partial file. Throws std::runtime_error naming the path and the reason.
void write_png(const std::string& path, const RgbImage& image);

}  // namespace wt

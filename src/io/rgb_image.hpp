#pragma once
// An 8-bit RGB raster, row-major from the top left: what png_writer encodes and the figures that
// wavetrain draws itself (--evaluate's confusion matrix) paint into. Writes outside the image are
// dropped, so drawing code need not clip.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace wt {

struct Rgb {
  uint8_t r = 0, g = 0, b = 0;
  bool operator==(const Rgb& o) const { return r == o.r && g == o.g && b == o.b; }
  bool operator!=(const Rgb& o) const { return !(*this == o); }
};

class RgbImage {
 public:
  RgbImage(int width, int height, Rgb fill) : width_(width), height_(height) {
    if (width <= 0 || height <= 0)
      throw std::invalid_argument("image size " + std::to_string(width) + "x" +
                                  std::to_string(height) + ": both must be positive");
    pixels_.resize(size_t(width) * size_t(height) * 3);
    fill_rect(0, 0, width, height, fill);
  }

  int width() const { return width_; }
  int height() const { return height_; }
  // Three bytes a pixel (r, g, b), width * 3 bytes a row.
  const std::vector<uint8_t>& bytes() const { return pixels_; }

  Rgb at(int x, int y) const {
    const uint8_t* p = &pixels_[offset(x, y)];
    return {p[0], p[1], p[2]};
  }
  void set(int x, int y, Rgb c) {
    if (x < 0 || y < 0 || x >= width_ || y >= height_) return;
    uint8_t* p = &pixels_[offset(x, y)];
    p[0] = c.r, p[1] = c.g, p[2] = c.b;
  }
  void fill_rect(int x, int y, int w, int h, Rgb c) {
    for (int j = y; j < y + h; ++j)
      for (int i = x; i < x + w; ++i) set(i, j, c);
  }

 private:
  size_t offset(int x, int y) const { return (size_t(y) * size_t(width_) + size_t(x)) * 3; }

  int width_, height_;
  std::vector<uint8_t> pixels_;
};

}  // namespace wt

// The PNG encoder, checked by an independent decoder (tests/unit/decode_png.py: Python's struct
// and zlib): signature, chunk layout and CRCs, and every pixel back as written; and the bitmap
// font the figures label themselves with.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "dataset_test_util.hpp"
#include "io/bitmap_font.hpp"
#include "io/png_writer.hpp"

namespace wt {
namespace {

using testutil::TempDir;

uint32_t be32(const std::string& s, size_t at) {
  uint32_t v = 0;
  for (size_t i = 0; i < 4; ++i) v = v << 8 | uint8_t(s[at + i]);
  return v;
}

// Distinct neighbours in every channel, so a swapped row, column or channel shows.
RgbImage pattern(int width, int height) {
  RgbImage image(width, height, Rgb{0, 0, 0});
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x)
      image.set(x, y, Rgb{uint8_t(x * 37 + y * 11), uint8_t(x * 5 + 3), uint8_t(255 - y * 7)});
  return image;
}

// decode_png.py's "WIDTH HEIGHT" and pixel hex for `path`; fails the test if it refused it.
std::pair<std::string, std::string> decoded(const std::string& path, const std::string& log) {
  const std::string script = std::string(WT_SOURCE_DIR) + "/tests/unit/decode_png.py";
  const int status = std::system(
      (std::string(WT_PYTHON3) + " " + script + " " + path + " > " + log + " 2>&1").c_str());
  std::ifstream in(log);
  std::string size, hex;
  std::getline(in, size);
  std::getline(in, hex);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << size << "\n" << hex;
  return {size, hex};
}

std::string hex_of(const std::vector<uint8_t>& bytes) {
  std::string out;
  char pair[3];
  for (uint8_t b : bytes) {
    std::snprintf(pair, sizeof pair, "%02x", b);
    out += pair;
  }
  return out;
}

TEST(PngWriter, SignatureHeaderAndEnd) {
  const std::string png = encode_png(pattern(3, 2));
  ASSERT_GT(png.size(), 8u + 25 + 12 + 12);
  EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  EXPECT_EQ(be32(png, 8), 13u);  // IHDR's length
  EXPECT_EQ(png.substr(12, 4), "IHDR");
  EXPECT_EQ(be32(png, 16), 3u);
  EXPECT_EQ(be32(png, 20), 2u);
  EXPECT_EQ(png.substr(24, 5), std::string("\x08\x02\x00\x00\x00", 5));  // 8-bit RGB
  EXPECT_EQ(png.substr(37, 4), "IDAT");
  // IEND: empty, and its CRC is the same in every PNG.
  EXPECT_EQ(png.substr(png.size() - 12), std::string("\0\0\0\0IEND\xae\x42\x60\x82", 12));
}

TEST(PngWriter, AnIndependentDecoderReadsBackEveryPixel) {
  TempDir dir("png");
  for (auto [width, height] : {std::pair{1, 1}, std::pair{7, 5}, std::pair{301, 200}}) {
    const RgbImage image = pattern(width, height);
    const std::string path = dir.file("p.png");
    write_png(path, image);
    EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
    const auto [size, hex] = decoded(path, dir.file("log.txt"));
    EXPECT_EQ(size, std::to_string(width) + " " + std::to_string(height));
    EXPECT_TRUE(hex == hex_of(image.bytes())) << width << "x" << height << " pixels differ";
  }
}

TEST(PngWriter, AnUnwritablePathThrowsAndLeavesNothing) {
  TempDir dir("png");
  const std::string path = dir.file("missing/p.png");
  try {
    write_png(path, pattern(4, 4));
    FAIL() << "wrote " << path;
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir.file("")));
}

TEST(RgbImage, WritesOutsideAreDroppedAndSizesMustBePositive) {
  RgbImage image(2, 2, Rgb{1, 2, 3});
  image.fill_rect(-5, -5, 6, 6, Rgb{9, 9, 9});  // covers (0, 0) only
  EXPECT_EQ(image.at(0, 0), (Rgb{9, 9, 9}));
  EXPECT_EQ(image.at(1, 1), (Rgb{1, 2, 3}));
  EXPECT_THROW(RgbImage(0, 3, Rgb{}), std::invalid_argument);
}

TEST(BitmapFont, DrawsGlyphsUprightAndRotated) {
  EXPECT_EQ(text_width("10", 2), 2 * 11);
  EXPECT_EQ(text_width("", 3), 0);
  const Rgb ink{0, 0, 0}, paper{255, 255, 255};
  RgbImage image(20, 20, paper);
  draw_text(image, 2, 3, "1", 2, ink);
  // '1': the stem is font column 2 on every row; its foot (row 6) spans columns 1 to 3.
  for (int row = 0; row < kGlyphHeight; ++row)
    EXPECT_EQ(image.at(2 + 2 * 2 + 1, 3 + 2 * row + 1), ink) << "row " << row;
  EXPECT_EQ(image.at(2 + 2 * 1, 3 + 2 * 6), ink);
  EXPECT_EQ(image.at(2 + 2 * 0, 3 + 2 * 6), paper);
  // Rotated to read upwards from (2, 19): the glyph's top row lies at x = 2, its columns upwards.
  RgbImage turned(20, 20, paper);
  draw_text(turned, 2, 19, "-", 1, ink, /*rotated=*/true);
  for (int col = 0; col < kGlyphWidth; ++col) EXPECT_EQ(turned.at(2 + 3, 19 - 1 - col), ink);
  EXPECT_EQ(turned.at(2 + 2, 18), paper);
}

TEST(BitmapFont, ACharacterOutsideTheFontIsABox) {
  EXPECT_FALSE(has_glyph('Q'));
  RgbImage image(7, 9, Rgb{255, 255, 255});
  draw_text(image, 1, 1, "Q", 1, Rgb{0, 0, 0});
  EXPECT_EQ(image.at(1, 1), (Rgb{0, 0, 0}));
  EXPECT_EQ(image.at(5, 7), (Rgb{0, 0, 0}));
  EXPECT_EQ(image.at(3, 4), (Rgb{255, 255, 255}));
  for (char c : std::string("0123456789 .,%()-:acdefilnoprstuy")) EXPECT_TRUE(has_glyph(c)) << c;
}

}  // namespace
}  // namespace wt

// --evaluate's confusion-matrix figure: its size for a few class counts, each cell shaded by its
// share of the row, counts drawn where they fit, and only glyphs the font has.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "app/confusion_png.hpp"
#include "io/bitmap_font.hpp"

namespace wt {
namespace {

ClassificationReport report(const std::vector<std::vector<int64_t>>& confusion) {
  ClassificationReport r;
  r.confusion = confusion;
  for (size_t t = 0; t < confusion.size(); ++t) {
    r.class_names.push_back("c" + std::to_string(t));
    for (size_t p = 0; p < confusion.size(); ++p) {
      r.samples += confusion[t][p];
      if (t == p) r.correct += confusion[t][p];
    }
  }
  return r;
}

// A pixel of cell (t, p) clear of the grid line and of the centred count.
Rgb cell_corner(const RgbImage& image, const ConfusionLayout& l, int t, int p) {
  return image.at(l.left + p * l.cell + 2, l.top + t * l.cell + 2);
}

TEST(ConfusionPng, SizeForTwoTenAndManyClasses) {
  const std::string title = "accuracy 94.87% (111 of 117)";
  const ConfusionLayout two = confusion_layout(2, 117, title);
  EXPECT_EQ(two.cell, 160);
  EXPECT_EQ(two.count_scale, 3);
  EXPECT_EQ(two.label_step, 1);
  EXPECT_EQ(two.width, two.left + 2 * 160 + 12);
  const ConfusionLayout ten = confusion_layout(10, 1000, title);
  EXPECT_EQ(ten.cell, 64);
  EXPECT_GE(ten.count_scale, 2);  // "1000" readable
  EXPECT_EQ(ten.label_step, 1);
  const ConfusionLayout many = confusion_layout(100, 5, title);
  EXPECT_EQ(many.cell, 6);
  EXPECT_EQ(many.count_scale, 0);  // no room for digits
  EXPECT_EQ(many.label_step, 5);   // "99" at 11 pixels over 6-pixel cells
  for (const ConfusionLayout& l : {two, ten, many}) {
    EXPECT_GE(l.width, text_width(title, 2));
    EXPECT_GT(l.height, l.top);
  }
}

TEST(ConfusionPng, ShadesEachCellByItsShareOfTheRow) {
  // Row 0: all right; row 1: split 3 to 1; row 2: no samples at all.
  const ClassificationReport r = report({{5, 0, 0}, {3, 1, 0}, {0, 0, 0}});
  const RgbImage image = confusion_image(r);
  const ConfusionLayout l = confusion_layout(3, 5, confusion_title(r));
  ASSERT_EQ(image.width(), l.width);
  ASSERT_EQ(image.height(), l.height);
  EXPECT_EQ(cell_corner(image, l, 0, 0), confusion_shade(1.0));
  EXPECT_EQ(cell_corner(image, l, 0, 1), confusion_shade(0.0));
  EXPECT_EQ(cell_corner(image, l, 1, 0), confusion_shade(0.75));
  EXPECT_EQ(cell_corner(image, l, 1, 1), confusion_shade(0.25));
  EXPECT_EQ(cell_corner(image, l, 2, 2), confusion_shade(0.0));
  EXPECT_EQ(confusion_shade(0.0), (Rgb{247, 251, 255}));
  EXPECT_EQ(confusion_shade(1.0), (Rgb{8, 48, 107}));
  // The count "5" in the dark cell (0, 0) is white: some pixel of the cell's middle is.
  bool white = false;
  for (int dy = -10; dy <= 10; ++dy)
    for (int dx = -10; dx <= 10; ++dx)
      white |= image.at(l.left + l.cell / 2 + dx, l.top + l.cell / 2 + dy) == Rgb{255, 255, 255};
  EXPECT_TRUE(white);
}

TEST(ConfusionPng, TitleSaysTheAccuracyInGlyphsTheFontHas) {
  const ClassificationReport r = report({{100, 11}, {6, 0}});
  EXPECT_EQ(confusion_title(r), "accuracy 85.47% (100 of 117)");
  for (const std::string& text : {confusion_title(r), std::string("true class predicted class")})
    for (char c : text) EXPECT_TRUE(has_glyph(c)) << "'" << c << "' in " << text;
}

}  // namespace
}  // namespace wt

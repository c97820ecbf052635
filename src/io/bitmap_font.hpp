#pragma once
// A 5x7 pixel font for the labels of the figures wavetrain draws itself: digits, ' ', '.', ',',
// '%', '(', ')', '-', ':' and the lowercase letters a c d e f i l n o p r s t u y. A character
// outside that set is drawn as a hollow box, so a missing glyph shows rather than vanishes.
#include <string>

#include "io/rgb_image.hpp"

namespace wt {

constexpr int kGlyphWidth = 5, kGlyphHeight = 7;
constexpr int kGlyphAdvance = kGlyphWidth + 1;  // one column of space between characters

bool has_glyph(char c);

// Width in pixels of `text` drawn at `scale` (each font pixel a scale x scale square).
inline int text_width(const std::string& text, int scale) {
  return text.empty() ? 0 : scale * (kGlyphAdvance * int(text.size()) - 1);
}
inline int text_height(int scale) { return scale * kGlyphHeight; }

// Draws `text` with its top-left corner at (x, y). Rotated: turned a quarter counterclockwise to
// read upwards (an axis title beside rows), its bottom-left corner at (x, y), text_width high.
void draw_text(RgbImage& image, int x, int y, const std::string& text, int scale, Rgb colour,
               bool rotated = false);

}  // namespace wt

#include "app/confusion_png.hpp"

#include <algorithm>
#include <cstdio>

#include "io/bitmap_font.hpp"

namespace wt {

namespace {

constexpr int kPad = 12;  // around the figure
constexpr int kGap = 6;   // between the matrix and its index labels
constexpr int kTitleScale = 2;
constexpr Rgb kWhite{255, 255, 255}, kInk{20, 20, 20}, kGrid{225, 225, 225}, kFrame{120, 120, 120};
const char* const kRowsTitle = "true class";
const char* const kColumnsTitle = "predicted class";

int64_t row_total(const std::vector<int64_t>& row) {
  int64_t total = 0;
  for (int64_t n : row) total += n;
  return total;
}

// The largest digit scale (up to 3) at which `text` fits in a cell with a margin; 0 if none.
int fitting_scale(const std::string& text, int cell) {
  for (int scale = 3; scale >= 1; --scale)
    if (text_width(text, scale) + 4 * scale + 4 <= cell && text_height(scale) + 4 <= cell)
      return scale;
  return 0;
}

// Label every step-th class, step from 1, 2, 5, 10, 20, 50..., so labels keep apart.
int label_step(int cell, int widest, int scale) {
  const int needed = std::max(widest + 4, text_height(scale) + 2);
  for (int step = 1;; step *= 10)
    for (int m : {1, 2, 5})
      if (step * m * cell >= needed) return step * m;
}

void draw_cells(RgbImage& image, const ClassificationReport& r, const ConfusionLayout& l) {
  const size_t n = r.confusion.size();
  for (size_t t = 0; t < n; ++t) {
    const int64_t total = row_total(r.confusion[t]);
    for (size_t p = 0; p < n; ++p) {
      const int64_t count = r.confusion[t][p];
      const double share = total ? double(count) / double(total) : 0.0;
      const int x = l.left + int(p) * l.cell, y = l.top + int(t) * l.cell;
      image.fill_rect(x, y, l.cell, l.cell, confusion_shade(share));
      if (l.cell >= 16) {  // a faint grid tells equal neighbours apart
        image.fill_rect(x, y, l.cell, 1, kGrid);
        image.fill_rect(x, y, 1, l.cell, kGrid);
      }
      if (l.count_scale == 0) continue;
      const std::string text = std::to_string(count);
      draw_text(image, x + (l.cell - text_width(text, l.count_scale) + 1) / 2,
                y + (l.cell - text_height(l.count_scale) + 1) / 2, text, l.count_scale,
                share > 0.5 ? kWhite : kInk);
    }
  }
  const int side = int(n) * l.cell;  // a frame just outside the matrix
  image.fill_rect(l.left - 1, l.top - 1, side + 2, 1, kFrame);
  image.fill_rect(l.left - 1, l.top + side, side + 2, 1, kFrame);
  image.fill_rect(l.left - 1, l.top - 1, 1, side + 2, kFrame);
  image.fill_rect(l.left + side, l.top - 1, 1, side + 2, kFrame);
}

void draw_axes(RgbImage& image, size_t n, const ConfusionLayout& l) {
  const int s = l.label_scale, side = int(n) * l.cell, h = text_height(s);
  for (size_t c = 0; c < n; c += size_t(l.label_step)) {
    const std::string text = std::to_string(c);
    const int w = text_width(text, s), middle = int(c) * l.cell + l.cell / 2;
    draw_text(image, l.left - kGap - w, l.top + middle - h / 2, text, s, kInk);
    draw_text(image, l.left + middle - w / 2, l.top + side + kGap, text, s, kInk);
  }
  draw_text(image, l.left + (side - text_width(kColumnsTitle, s)) / 2,
            l.top + side + 2 * kGap + h + 2, kColumnsTitle, s, kInk);
  draw_text(image, kPad, l.top + (side + text_width(kRowsTitle, s)) / 2, kRowsTitle, s, kInk,
            /*rotated=*/true);
}

}  // namespace

ConfusionLayout confusion_layout(size_t classes, int64_t largest_count, const std::string& title) {
  ConfusionLayout l;
  const int n = int(std::max<size_t>(classes, 1));
  // About 640 pixels of matrix: cells up to 160 (a 2x2 is not a thumbnail), down to 1.
  l.cell = std::clamp(640 / n, 1, 160);
  l.count_scale = fitting_scale(std::to_string(largest_count), l.cell);
  l.label_scale = l.cell >= 24 ? 2 : 1;
  const int widest = text_width(std::to_string(n - 1), l.label_scale);
  l.label_step = label_step(l.cell, widest, l.label_scale);
  const int label_h = text_height(l.label_scale);
  l.top = kPad + text_height(kTitleScale) + kPad;
  l.left = kPad + label_h + 2 * kGap + widest + kGap;
  const int side = n * l.cell;
  l.width = std::max(l.left + side + kPad, text_width(title, kTitleScale) + 2 * kPad);
  l.height = l.top + side + 2 * kGap + 2 + 2 * label_h + kPad;
  return l;
}

std::string confusion_title(const ClassificationReport& report) {
  char text[96];
  std::snprintf(text, sizeof text, "accuracy %.2f%% (%lld of %lld)", 100.0 * report.accuracy(),
                static_cast<long long>(report.correct), static_cast<long long>(report.samples));
  return text;
}

Rgb confusion_shade(double share) {
  // matplotlib's "Blues" at 0, 0.5 and 1 (as analysis/confusion.py draws), linear between.
  constexpr Rgb stops[] = {{247, 251, 255}, {107, 174, 214}, {8, 48, 107}};
  const double at = std::clamp(share, 0.0, 1.0) * 2.0;
  const int i = std::min(int(at), 1);
  const double f = at - i;
  auto mix = [f](uint8_t a, uint8_t b) { return uint8_t(a + (b - a) * f + 0.5); };
  return {mix(stops[i].r, stops[i + 1].r), mix(stops[i].g, stops[i + 1].g),
          mix(stops[i].b, stops[i + 1].b)};
}

RgbImage confusion_image(const ClassificationReport& report) {
  int64_t largest = 0;
  for (const auto& row : report.confusion)
    for (int64_t count : row) largest = std::max(largest, count);
  const std::string title = confusion_title(report);
  const ConfusionLayout l = confusion_layout(report.confusion.size(), largest, title);
  RgbImage image(l.width, l.height, kWhite);
  draw_text(image, (l.width - text_width(title, kTitleScale)) / 2, kPad, title, kTitleScale, kInk);
  draw_cells(image, report, l);
  draw_axes(image, report.confusion.size(), l);
  return image;
}

}  // namespace wt

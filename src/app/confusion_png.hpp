#pragma once
// --evaluate's confusion matrix as a heat map, drawn here so that every evaluation leaves a figure
// without Python: rows the true class, columns the predicted one, a cell's shade its count over
// its row's (white 0 to dark blue 1), the count in the cell where it fits, class indices on the
// axes and the accuracy as the title. analysis/confusion.py draws a fuller one, with class names.
#include <cstddef>
#include <string>

#include "app/classification_report.hpp"
#include "io/rgb_image.hpp"

namespace wt {

// Where the parts of the figure go, in pixels: the matrix's top-left corner and cell size, the
// scale of the counts' digits (0: the cells are too small for them), of the axis labels, and
// how many classes apart the labelled indices are.
struct ConfusionLayout {
  int cell = 0, left = 0, top = 0, width = 0, height = 0;
  int count_scale = 0, label_scale = 0, label_step = 1;
};

ConfusionLayout confusion_layout(size_t classes, int64_t largest_count, const std::string& title);

// The title line: "accuracy 94.87% (111 of 117)".
std::string confusion_title(const ClassificationReport& report);

// The shade of a cell holding `share` of its row (0 to 1).
Rgb confusion_shade(double share);

RgbImage confusion_image(const ClassificationReport& report);

}  // namespace wt

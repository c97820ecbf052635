#pragma once
// A classifier's test results: loss, accuracy, per-class precision and recall and the confusion
// matrix, as --evaluate prints them and writes them (a long-format CSV, one value per row, that
// analysis/confusion.py draws; app/confusion_png.hpp draws the matrix without Python).
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "app/trained_model.hpp"

namespace wt {

struct ClassificationReport {
  std::vector<std::string> class_names;
  int64_t samples = 0, correct = 0;
  double loss = 0;                              // mean cross-entropy per sample
  std::vector<std::vector<int64_t>> confusion;  // [true class][predicted class]: sample counts

  double accuracy() const { return samples ? double(correct) / double(samples) : 0.0; }
  // Of the samples predicted (precision) or labelled (recall) class c, the share right; NaN
  // where there are none.
  double precision(size_t c) const;
  double recall(size_t c) const;
};

ClassificationReport classification_report(const ModelAnswers& answers);

// The report as text: loss, accuracy, a per-class table and the confusion matrix.
void print_report(const ClassificationReport& report, std::ostream& out);

// CSV with columns quantity,true_class,predicted_class,value: rows loss and accuracy (classes
// empty), precision and recall (per class; value empty where undefined), count (per true and
// predicted class: the confusion matrix), samples.
std::string report_csv(const ClassificationReport& report);

}  // namespace wt

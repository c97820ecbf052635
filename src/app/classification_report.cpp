#include "app/classification_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace wt {

namespace {

std::string fixed(double value, int digits) {
  if (std::isnan(value)) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%.*f", digits, value);
  return text;
}

std::string padded(const std::string& text, size_t width) {
  return text.size() >= width ? text + " " : text + std::string(width - text.size(), ' ');
}

// A CSV field: quoted when a class name holds a comma, quote or line break.
std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string csv_number(double value) {
  if (std::isnan(value)) return "";
  char text[40];
  std::snprintf(text, sizeof text, "%.17g", value);
  return text;
}

}  // namespace

double ClassificationReport::precision(size_t c) const {
  int64_t predicted = 0;
  for (const auto& row : confusion) predicted += row[c];
  return predicted ? double(confusion[c][c]) / double(predicted)
                   : std::numeric_limits<double>::quiet_NaN();
}

double ClassificationReport::recall(size_t c) const {
  int64_t labelled = 0;
  for (int64_t n : confusion[c]) labelled += n;
  return labelled ? double(confusion[c][c]) / double(labelled)
                  : std::numeric_limits<double>::quiet_NaN();
}

ClassificationReport classification_report(const ModelAnswers& answers) {
  ClassificationReport r;
  r.class_names = answers.class_names;
  r.samples = answers.samples();
  r.loss = r.samples ? answers.loss_sum / double(r.samples) : 0.0;
  r.confusion.assign(size_t(answers.classes), std::vector<int64_t>(size_t(answers.classes), 0));
  for (int64_t i = 0; i < r.samples; ++i) {
    const int32_t truth = answers.labels[size_t(i)], guess = answers.predicted(i);
    ++r.confusion[size_t(truth)][size_t(guess)];
    r.correct += truth == guess;
  }
  return r;
}

void print_report(const ClassificationReport& r, std::ostream& out) {
  out << "test loss " << fixed(r.loss, 6) << ", accuracy " << fixed(r.accuracy(), 6) << " ("
      << r.correct << " of " << r.samples << ")\n";
  size_t width = 7;  // "class  "
  for (const std::string& name : r.class_names) width = std::max(width, name.size() + 2);
  out << padded("class", width) << "precision  recall    samples\n";
  for (size_t c = 0; c < r.class_names.size(); ++c) {
    int64_t labelled = 0;
    for (int64_t n : r.confusion[c]) labelled += n;
    out << padded(r.class_names[c], width) << padded(fixed(r.precision(c), 4), 11)
        << padded(fixed(r.recall(c), 4), 10) << labelled << "\n";
  }
  out << "confusion matrix (rows: true class, columns: predicted, in the order above):\n";
  size_t cell = 3;
  for (const auto& row : r.confusion)
    for (int64_t n : row) cell = std::max(cell, std::to_string(n).size() + 2);
  for (size_t c = 0; c < r.confusion.size(); ++c) {
    out << padded(r.class_names[c], width);
    for (int64_t n : r.confusion[c]) {
      const std::string text = std::to_string(n);
      out << std::string(cell - text.size(), ' ') << text;
    }
    out << "\n";
  }
}

std::string report_csv(const ClassificationReport& r) {
  std::string csv = "quantity,true_class,predicted_class,value\n";
  auto row = [&csv](const std::string& quantity, const std::string& truth,
                    const std::string& predicted, const std::string& value) {
    csv += quantity + "," + csv_field(truth) + "," + csv_field(predicted) + "," + value + "\n";
  };
  row("samples", "", "", std::to_string(r.samples));
  row("loss", "", "", csv_number(r.loss));
  row("accuracy", "", "", csv_number(r.accuracy()));
  for (size_t c = 0; c < r.class_names.size(); ++c) {
    row("precision", r.class_names[c], "", csv_number(r.precision(c)));
    row("recall", r.class_names[c], "", csv_number(r.recall(c)));
  }
  for (size_t t = 0; t < r.confusion.size(); ++t)
    for (size_t p = 0; p < r.confusion[t].size(); ++p)
      row("count", r.class_names[t], r.class_names[p], std::to_string(r.confusion[t][p]));
  return csv;
}

}  // namespace wt

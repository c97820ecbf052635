#include "app/evaluate_command.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "app/classification_report.hpp"
#include "app/confusion_png.hpp"
#include "io/checked_file.hpp"
#include "io/png_writer.hpp"
#include "util/input_error.hpp"

namespace fs = std::filesystem;

namespace wt {

namespace {

// The evaluation's CSV: named by the checkpoint, and by the dataset when --data chose one.
std::string report_path(const TrainedModelRequest& request, const CheckpointInfo& info,
                        const std::string& run_dir) {
  std::string dir = run_dir;
  if (dir.empty()) dir = fs::is_directory(info.run_dir) ? info.run_dir : "";
  if (dir.empty()) dir = fs::path(request.checkpoint).parent_path().string();
  if (dir.empty()) dir = ".";
  std::string name = "evaluation_" + fs::path(request.checkpoint).stem().string();
  if (!request.data.empty()) name += "_" + fs::path(request.data).stem().string();
  return (fs::path(dir) / (name + ".csv")).string();
}

// An output file that cannot be written is found before the model runs, not after.
void check_can_write(const std::string& path, const std::string& key) {
  const fs::path parent = fs::absolute(path).parent_path();
  std::error_code error;
  if (!fs::is_directory(parent, error))
    throw InputError(path, 0, key, "its directory " + parent.string() + " does not exist");
  if (fs::exists(path, error) && !fs::is_regular_file(path, error))
    throw InputError(path, 0, key, "is not a regular file");
  if (::access(parent.c_str(), W_OK) != 0)
    throw InputError(path, 0, key, std::string("cannot write there: ") + std::strerror(errno));
}

void write_output(const std::string& path, const std::string& key, const std::string& text) {
  try {
    write_file_atomically(path, text);
  } catch (const std::runtime_error& e) {
    throw InputError(path, 0, key, e.what());
  }
}

// The CSV and its figure appear together or not at all: both are made before either is written,
// and the PNG goes if the CSV cannot follow it.
void write_evaluation(const std::string& csv_path, const std::string& png_path,
                      const ClassificationReport& report) {
  const std::string csv = report_csv(report);
  const std::string png = encode_png(confusion_image(report));
  write_output(png_path, "run directory", png);
  try {
    write_output(csv_path, "run directory", csv);
  } catch (...) {
    std::remove(png_path.c_str());
    throw;
  }
}

void print_source(const TrainedModelRequest& request, const ModelAnswers& a, std::ostream& out) {
  out << request.checkpoint << ": model '" << a.checkpoint.model << "' after step "
      << a.checkpoint.step << ", on " << a.data_path << " /" << a.split << ": " << a.samples()
      << " samples, " << a.classes << " classes\n";
}

std::string probability(float p) {
  char text[24];
  std::snprintf(text, sizeof text, "%.9g", double(p));
  return text;
}

}  // namespace

std::string evaluate_command(const TrainedModelRequest& request, const std::string& run_dir,
                             std::ostream& out) {
  if (!run_dir.empty() && !fs::is_directory(run_dir))
    throw InputError(run_dir, 0, "--run-dir", "no such directory");
  const ModelAnswers answers = answer_test_split(request);
  const std::string path = report_path(request, answers.checkpoint, run_dir);
  const std::string png_path = fs::path(path).replace_extension(".png").string();
  check_can_write(path, "run directory");
  check_can_write(png_path, "run directory");
  const ClassificationReport report = classification_report(answers);
  print_source(request, answers, out);
  print_report(report, out);
  write_evaluation(path, png_path, report);
  out << "wrote " << path << " and " << png_path
      << " (redrawn with class names: analysis/confusion.py " << path << ")\n";
  return path;
}

void predict_command(const TrainedModelRequest& request, const std::string& output,
                     std::ostream& out) {
  check_can_write(output, "--output");
  const ModelAnswers a = answer_test_split(request);
  std::string csv = "row,label,predicted";
  // A column per class, p_<name>; p_<index> where a name would need quoting.
  for (size_t c = 0; c < a.class_names.size(); ++c) {
    const std::string& name = a.class_names[c];
    csv += ",p_" + (name.find_first_of(",\"\n\r ") == std::string::npos ? name : std::to_string(c));
  }
  csv += "\n";
  for (int64_t i = 0; i < a.samples(); ++i) {
    csv += std::to_string(i) + "," + std::to_string(a.labels[size_t(i)]) + "," +
           std::to_string(a.predicted(i));
    for (int64_t c = 0; c < a.classes; ++c)
      csv += "," + probability(a.probabilities[size_t(i * a.classes + c)]);
    csv += "\n";
  }
  write_output(output, "--output", csv);
  print_source(request, a, out);
  out << "wrote " << output << ": class probabilities of " << a.samples() << " samples\n";
}

}  // namespace wt

// Converts Fashion-MNIST (or any MNIST-style idx set, plain or gzipped) into a wavetrain HDF5
// dataset. Exit status: 0 done, 2 bad input (missing or malformed files, bad options), 1 other.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "data/idx_convert.hpp"
#include "tool_command_line.hpp"
#include "util/input_error.hpp"

namespace {

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(item);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Convert an idx image set ({train,t10k}-{images-idx3,labels-idx1}-ubyte[.gz]) into a "
      "wavetrain HDF5 dataset with /train and /test splits."};
  std::string input_dir = "/usr/share/datasets/fashion-mnist";
  std::string output;
  std::string class_names;
  std::string source;
  app.add_option("--input-dir", input_dir, "directory holding the four idx files")
      ->capture_default_str();
  app.add_option("--output", output, "HDF5 file to write (replaced atomically)")->required();
  app.add_option("--class-names", class_names,
                 "comma-separated class names (default: the 10 Fashion-MNIST classes)");
  app.add_option("--source", source, "provenance string stored in the file");
  if (const int rc = wt::tools::parse_tool_command_line(app, argc, argv);
      rc != wt::tools::kContinue)
    return rc;

  return wt::tools::run_reporting_errors("fmnist_to_hdf5", [&]() -> int {
    const auto started = std::chrono::steady_clock::now();
    wt::tools::require_output_directory(output);

    const wt::IdxSetPaths paths = wt::find_idx_set(input_dir);
    const std::vector<std::string> names =
        class_names.empty() ? wt::fashion_mnist_class_names() : split_commas(class_names);
    if (source.empty())
      source = "idx files from " + std::filesystem::absolute(input_dir).string() +
               " (Fashion-MNIST, Debian dataset-fashion-mnist), converted by fmnist_to_hdf5";
    const wt::IdxConvertResult r = wt::convert_idx_to_hdf5(paths, output, names, source);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    std::printf(
        "wrote %s: train %lld, test %lld samples of %s, mean %.6f std %.6f, %.1f MB in %.2f s\n",
        output.c_str(), static_cast<long long>(r.train_samples),
        static_cast<long long>(r.test_samples), wt::shape_str(r.sample_shape).c_str(), r.mean,
        r.std, std::filesystem::file_size(output) / 1e6, seconds);
    return 0;
  });
}

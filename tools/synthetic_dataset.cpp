// Writes a small float32 wavetrain HDF5 dataset whose classes are learnable (each class brightens
// its own band of rows of a 1x28x28 image, plus noise), with chosen training rows poisoned by a
// NaN or Inf pixel: the data for testing failure.on_nonfinite without touching a real dataset.
// Exit status: 0 done, 2 bad options, 1 other.
#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <set>

#include "data/dataset_writer.hpp"
#include "tool_command_line.hpp"

namespace {

wt::DatasetSplit make_split(const std::string& name, int64_t rows, uint64_t seed,
                            const std::set<int64_t>& nan_rows, const std::set<int64_t>& inf_rows) {
  constexpr int kClasses = 10, kSide = 28;
  wt::DatasetSplit split;
  split.name = name;
  split.sample_shape = {1, kSide, kSide};
  const int64_t per = kSide * kSide;
  split.inputs_f32.resize(size_t(rows * per));
  split.labels.resize(size_t(rows));
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> noise(0.0f, 0.5f);
  for (int64_t r = 0; r < rows; ++r) {
    const int label = int(rng() % kClasses);
    split.labels[size_t(r)] = label;
    float* x = split.inputs_f32.data() + r * per;
    for (int64_t e = 0; e < per; ++e) {
      const int band = int(e / kSide) * kClasses / kSide;  // image row -> class band
      x[e] = noise(rng) + (band == label ? 1.0f : 0.0f);
    }
    if (nan_rows.count(r)) x[per / 2] = std::numeric_limits<float>::quiet_NaN();
    if (inf_rows.count(r)) x[per / 3] = std::numeric_limits<float>::infinity();
  }
  return split;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Write a synthetic float32 dataset (/train, /test; 1x28x28, 10 classes), optionally "
      "with NaN or Inf in chosen rows."};
  std::string output;
  int64_t train_rows = 1024, test_rows = 256;
  uint64_t seed = 1;
  std::vector<int64_t> nan_rows, inf_rows, test_nan_rows;
  app.add_option("--output", output, "HDF5 file to write (replaced atomically)")->required();
  app.add_option("--train", train_rows, "training rows")->check(CLI::Range(1, 1 << 24));
  app.add_option("--test", test_rows, "test rows")->check(CLI::Range(1, 1 << 24));
  app.add_option("--seed", seed, "random seed");
  app.add_option("--nan-rows", nan_rows, "training rows (0-based) that get a NaN pixel")
      ->delimiter(',');
  app.add_option("--inf-rows", inf_rows, "training rows (0-based) that get an Inf pixel")
      ->delimiter(',');
  app.add_option("--test-nan-rows", test_nan_rows, "test rows (0-based) that get a NaN pixel")
      ->delimiter(',');
  if (const int rc = wt::tools::parse_tool_command_line(app, argc, argv);
      rc != wt::tools::kContinue)
    return rc;
  const std::set<int64_t> nans(nan_rows.begin(), nan_rows.end());
  const std::set<int64_t> infs(inf_rows.begin(), inf_rows.end());
  for (int64_t r : nans)
    if (r < 0 || r >= train_rows)
      return std::fprintf(stderr, "--nan-rows: %lld out of range\n", (long long)r), 2;
  for (int64_t r : infs)
    if (r < 0 || r >= train_rows)
      return std::fprintf(stderr, "--inf-rows: %lld out of range\n", (long long)r), 2;
  const std::set<int64_t> test_nans(test_nan_rows.begin(), test_nan_rows.end());
  for (int64_t r : test_nans)
    if (r < 0 || r >= test_rows)
      return std::fprintf(stderr, "--test-nan-rows: %lld out of range\n", (long long)r), 2;
  try {
    wt::DatasetInfo info;
    info.num_classes = 10;
    info.source = "synthetic_dataset (seed " + std::to_string(seed) + ")";
    wt::write_dataset(output,
                      {make_split("train", train_rows, seed, nans, infs),
                       make_split("test", test_rows, seed + 1, test_nans, {})},
                      info);
    std::printf("wrote %s: train %lld (%zu NaN, %zu Inf rows), test %lld\n", output.c_str(),
                (long long)train_rows, nans.size(), infs.size(), (long long)test_rows);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "synthetic_dataset: error: %s\n", e.what());
    return 1;
  }
}

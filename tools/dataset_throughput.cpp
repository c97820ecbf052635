// Measures how fast a wavetrain HDF5 dataset is read the way training reads it: shuffled global
// batches from the BatchSampler, one part of `parts`, through DatasetReader (and
// DatasetBatchSource, the trainer's source, with the next batch planned ahead as the executor
// does). Useful to check a dataset on a cluster file system before a long run. Exit status: 0 done,
// 2 bad input, 1 other.
#include <CLI/CLI.hpp>
#include <Kokkos_Core.hpp>
#include <chrono>
#include <cstdio>
#include <thread>

#include "data/dataset_batch_source.hpp"
#include "device/device_context.hpp"
#include "tool_command_line.hpp"
#include "util/input_error.hpp"

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void report(const char* what, int64_t samples, int64_t sample_numel, double seconds) {
  std::printf("%-28s %9lld samples in %7.3f s: %10.0f samples/s, %7.1f MB/s of floats out\n", what,
              static_cast<long long>(samples), seconds, samples / seconds,
              samples * sample_numel * 4 / seconds / 1e6);
}

// --read-path: "best" leaves the reader's own choice; prints the path in use.
void choose_read_path(wt::DatasetReader& reader, const std::string& name) {
  using Path = wt::DatasetReader::ReadPath;
  if (name != "best")
    reader.set_read_path(name == "mapped"  ? Path::Mapped
                         : name == "pread" ? Path::Pread
                                           : Path::Hdf5);
  const Path in_use = reader.read_path();
  std::printf("read path: %s\n", in_use == Path::Mapped  ? "mapped"
                                 : in_use == Path::Pread ? "pread"
                                                         : "hdf5");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Read throughput of a wavetrain HDF5 dataset with shuffled batches."};
  std::string path, split = "train";
  int64_t batch = 64, batches = 0;
  int part = 0, parts = 1;
  uint64_t seed = 1;
  double compute_ms = 0;
  bool busy = false;
  std::string read_path = "best";
  app.add_option("--dataset", path, "HDF5 dataset file")->required();
  app.add_option("--split", split, "split to read")->capture_default_str();
  app.add_option("--batch", batch, "global batch size")->capture_default_str();
  app.add_option("--batches", batches, "batches to read (0 = one epoch)")->capture_default_str();
  app.add_option("--part", part, "this reader's part")->capture_default_str();
  app.add_option("--parts", parts, "parts per global batch (ranks)")->capture_default_str();
  app.add_option("--seed", seed, "shuffle seed")->capture_default_str();
  app.add_option("--compute-ms", compute_ms,
                 "wait this long after each loader batch, standing in for the model's work, "
                 "to show how much of the read preloading hides")
      ->capture_default_str();
  app.add_flag("--busy", busy,
               "spin through --compute-ms on this core (a CPU rank) instead of sleeping (a host "
               "waiting on its GPU)");
  app.add_option("--read-path", read_path,
                 "how DatasetReader reads rows: best (what training uses), mapped, pread or hdf5; "
                 "an unavailable path falls back to the next one")
      ->check(CLI::IsMember({"best", "mapped", "pread", "hdf5"}))
      ->capture_default_str();
  if (const int rc = wt::tools::parse_tool_command_line(app, argc, argv);
      rc != wt::tools::kContinue)
    return rc;

  Kokkos::ScopeGuard kokkos(argc, argv);
  return wt::tools::run_reporting_errors("dataset_throughput", [&]() -> int {
    auto t0 = std::chrono::steady_clock::now();
    wt::DatasetReader reader(path, split, {}, 0);
    std::printf("%s /%s: %lld samples of %s, opened and labels validated in %.3f s\n", path.c_str(),
                split.c_str(), static_cast<long long>(reader.size()),
                wt::shape_str(reader.sample_shape()).c_str(), seconds_since(t0));
    choose_read_path(reader, read_path);
    wt::BatchSampler sampler(reader.size(), batch, seed, true);
    if (batches <= 0) batches = sampler.batches_per_epoch();
    const int64_t local = sampler.part_size(part, parts);

    std::vector<float> x(static_cast<size_t>(local * reader.sample_numel()));
    std::vector<int32_t> y(static_cast<size_t>(local * reader.labels_per_sample()));
    wt::DataCursor c;
    t0 = std::chrono::steady_clock::now();
    for (int64_t b = 0; b < batches; ++b, c = sampler.advance(c))
      reader.read(sampler.rows(c.epoch, c.batch, part, parts), x.data(), y.data());
    report("DatasetReader::read", batches * local, reader.sample_numel(), seconds_since(t0));

    wt::DeviceContext device;  // the batches' memory, as a training rank's
    for (bool preload : {false, true}) {
      wt::DatasetBatchSource source(reader, device.allocator(), sampler, batch, preload);
      wt::Tensor inputs;
      t0 = std::chrono::steady_clock::now();
      for (int64_t b = 0; b < batches; ++b) {
        source.fetch({b, part, parts}, inputs, y);
        source.plan({{b + 1, part, parts}});
        if (compute_ms > 0) {
          if (busy) {
            const auto until = std::chrono::steady_clock::now() +
                               std::chrono::duration<double, std::milli>(compute_ms);
            while (std::chrono::steady_clock::now() < until) {
            }
          } else {
            std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(compute_ms));
          }
        }
      }
      source.quiesce();
      report(preload ? "DatasetBatchSource (preload on)" : "DatasetBatchSource (preload off)",
             batches * local, reader.sample_numel(), seconds_since(t0));
    }
    return 0;
  });
}

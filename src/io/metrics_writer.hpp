#pragma once
// metrics.csv in the run directory: one row per logging step ("train") and per evaluation
// ("eval"). Each row is flushed as written, so a killed job keeps everything up to its last row;
// a row that cannot be written (a full disk) throws, naming the file and the reason.
#include <cstdint>
#include <string>

#include "io/checked_file.hpp"

namespace wt {

struct MetricsRow {
  std::string kind;  // train | eval
  int64_t step = 0;
  double epoch = 0;
  double loss = 0;
  double accuracy = 0;
  double lr = 0;
  double samples_per_s = 0;
  double wall_s = 0;
  double peak_device_mb = 0;   // caching allocator peak (the device-memory budget's view)
  double rss_mb = 0;           // process peak resident set
  int64_t preload_hits = 0;    // training batches read ahead as planned, over all ranks so far
  int64_t preload_misses = 0;  // ... and read when asked for
  double peak_in_use_mb = 0;   // this job's peak bytes in use on the device (its account)
  int64_t forced_syncs = 0;    // synchronisations the allocator forced under memory pressure
  double fragmentation = 0;    // of the allocator's cached bytes now (MemoryStats)
  // Allocations the allocator took from the system so far (a cudaMalloc each on a GPU): after
  // the first step it should not grow.
  int64_t system_allocations = 0;
};

class MetricsWriter {
 public:
  // append: keep existing rows (restart); otherwise start a new file with a header.
  MetricsWriter(const std::string& path, bool append);
  void write(const MetricsRow& row);

 private:
  CheckedFile file_;
};

// Drops the rows after `step` (a resumed run rewrites what its killed predecessor logged past
// the checkpoint it resumes from). The file is replaced atomically. Returns the wall_s of the last
// row kept, so the resumed run's wall clock continues from there.
double truncate_metrics_after(const std::string& path, int64_t step);

}  // namespace wt

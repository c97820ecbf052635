#include "io/metrics_writer.hpp"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace wt {

MetricsWriter::MetricsWriter(const std::string& path, bool append) {
  std::FILE* existing = append ? std::fopen(path.c_str(), "r") : nullptr;
  const bool has_header = existing != nullptr;
  if (existing) std::fclose(existing);
  file_ = CheckedFile(path, append ? "a" : "w");
  if (!has_header)
    file_.write(
        "kind,step,epoch,loss,accuracy,lr,samples_per_s,wall_s,peak_device_mb,rss_mb,"
        "preload_hits,preload_misses,peak_in_use_mb,forced_syncs,fragmentation,system_"
        "allocations\n");
}

void MetricsWriter::write(const MetricsRow& r) {
  char row[512];
  std::snprintf(row, sizeof row,
                "%s,%lld,%.4f,%.17g,%.6f,%.6g,%.1f,%.3f,%.2f,%.2f,%lld,%lld,%.2f,%lld,%.4f,%lld\n",
                r.kind.c_str(), static_cast<long long>(r.step), r.epoch, r.loss, r.accuracy, r.lr,
                r.samples_per_s, r.wall_s, r.peak_device_mb, r.rss_mb,
                static_cast<long long>(r.preload_hits), static_cast<long long>(r.preload_misses),
                r.peak_in_use_mb, static_cast<long long>(r.forced_syncs), r.fragmentation,
                static_cast<long long>(r.system_allocations));
  file_.write(row);
}

double truncate_metrics_after(const std::string& path, int64_t step) {
  std::ifstream in(path);
  if (!in) return 0;
  std::string line, kept;
  double last_wall = 0;
  std::getline(in, line);
  kept = line + "\n";
  while (std::getline(in, line)) {
    // kind,step,epoch,loss,accuracy,lr,samples_per_s,wall_s,...
    std::vector<std::string> fields;
    std::stringstream ss(line);
    for (std::string f; std::getline(ss, f, ',');) fields.push_back(f);
    if (fields.size() < 8) continue;  // a row cut short by the crash
    if (std::atoll(fields[1].c_str()) > step) continue;
    kept += line + "\n";
    last_wall = std::atof(fields[7].c_str());
  }
  write_file_atomically(path, kept);
  return last_wall;
}

}  // namespace wt

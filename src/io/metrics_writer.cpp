#include "io/metrics_writer.hpp"

#include <stdexcept>

namespace wt {

MetricsWriter::MetricsWriter(const std::string& path, bool append) {
  std::FILE* existing = append ? std::fopen(path.c_str(), "r") : nullptr;
  const bool has_header = existing != nullptr;
  if (existing) std::fclose(existing);
  file_ = std::fopen(path.c_str(), append ? "a" : "w");
  if (!file_) throw std::runtime_error("cannot write " + path);
  if (!has_header)
    std::fprintf(file_,
                 "kind,step,epoch,loss,accuracy,lr,samples_per_s,wall_s,peak_device_mb,rss_mb\n");
  std::fflush(file_);
}

MetricsWriter::~MetricsWriter() {
  if (file_) std::fclose(file_);
}

void MetricsWriter::write(const MetricsRow& r) {
  std::fprintf(file_, "%s,%lld,%.4f,%.6f,%.6f,%.6g,%.1f,%.3f,%.2f,%.2f\n", r.kind.c_str(),
               static_cast<long long>(r.step), r.epoch, r.loss, r.accuracy, r.lr, r.samples_per_s,
               r.wall_s, r.peak_device_mb, r.rss_mb);
  std::fflush(file_);
}

}  // namespace wt

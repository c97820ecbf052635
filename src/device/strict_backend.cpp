#include "device/strict_backend.hpp"

#include <limits>
#include <stdexcept>
#include <string>

#include "util/steady_seconds.hpp"

namespace wt {

std::unique_ptr<ProgramEvents> make_strict_program_events(StrictStreams& queues,
                                                          const OpsBackend& kernels, int count,
                                                          int first_id);

const OpsBackend& StrictBackend::ops(int stream) {
  if (stream < 0) throw std::logic_error("negative stream " + std::to_string(stream));
  if (!memory_) throw std::logic_error("the strict device's kernels before its allocator");
  if (size_t(stream) >= stream_ops_.size()) stream_ops_.resize(size_t(stream) + 1);
  auto& ops = stream_ops_[size_t(stream)];
  if (!ops) ops = std::make_unique<StrictOps>(kernels_, queues_, *memory_, stream);
  return *ops;
}

void StrictBackend::run_on_device(const std::function<void()>& work,
                                  const std::function<bool()>& progress) {
  queues_.launch(0, DeviceWork{work, nullptr, false});
  queues_.drain(progress);
}

std::unique_ptr<ProgramEvents> StrictBackend::program_events(int count, void*) {
  const int first = next_event_id_;
  next_event_id_ += count;
  return make_strict_program_events(queues_, kernels_, count, first);
}

int64_t StrictBackend::time_marker(int stream) {
  int64_t marker = int64_t(marker_times_.size());
  if (!free_markers_.empty()) {
    marker = free_markers_.back();
    free_markers_.pop_back();
  } else {
    marker_times_.push_back(0);
  }
  marker_times_[size_t(marker)] = std::numeric_limits<double>::quiet_NaN();
  queues_.launch(stream,
                 DeviceWork{[this, marker] { marker_times_[size_t(marker)] = steady_seconds(); },
                            nullptr, false, "a trace's time marker"});
  return marker;
}

double StrictBackend::seconds_between(int64_t from, int64_t to) {
  return marker_times_.at(size_t(to)) - marker_times_.at(size_t(from));
}

void StrictBackend::release_time_marker(int64_t marker) {
  if (marker >= 0 && size_t(marker) < marker_times_.size()) free_markers_.push_back(marker);
}

}  // namespace wt

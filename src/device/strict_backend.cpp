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

void StrictBackend::order_after(int waiter, int producer, const std::string& what) {
  auto [it, fresh] = order_events_.try_emplace({producer, waiter}, next_event_id_);
  if (fresh) ++next_event_id_;
  const int id = it->second;
  const uint64_t at = queues_.next_sequence(producer);
  queues_.races().record_event(id, producer, at);
  queues_.graph().note_record(id, producer);
  queues_.launch(producer, DeviceWork{[] {}, nullptr, false, what + ": its record"});
  queues_.races().wait_event(waiter, id, queues_.next_sequence(waiter));
  queues_.graph().note_wait(waiter, id);
  queues_.launch(
      waiter,
      DeviceWork{[] {}, [this, producer, at] { return queues_.executed(producer) >= at; }, false,
                 what + ": the wait on stream " + std::to_string(waiter) + " for stream " +
                     std::to_string(producer)});
}

void StrictBackend::fork_from_stream0(const std::set<int>& streams) {
  for (int s : streams)
    if (s != 0) order_after(s, 0, "a graph's fork");
}

void StrictBackend::begin_graph_capture(int graph) {
  const bool forks_none = queues_.glue_bug() == StrictStreams::GlueBug::CaptureForksNone;
  const std::vector<int> used = forks_none ? std::vector<int>{} : queues_.streams_in_use();
  fork_from_stream0(std::set<int>(used.begin(), used.end()));
  queues_.graph().begin_capture(used, graph);
}

void StrictBackend::begin_graph_replay(int graph) {
  if (queues_.glue_bug() != StrictStreams::GlueBug::ReplayForksNone)
    fork_from_stream0(queues_.graph().streams_of(graph));
  queues_.graph().begin_replay(graph);
}

void StrictBackend::join_streams(int into) {
  const std::set<int> streams = queues_.graph().captured_streams();  // a copy: joining adds none
  for (int s : streams)
    if (s != into && s != kCommStream) order_after(into, s, "the step's join");
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

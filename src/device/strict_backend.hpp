#pragma once
// The strict device (device.kind = "strict"): the host's kernels under a GPU's rules, modelled on
// what a CUDA host program really does (ARCHITECTURE.md). Host code issues: each kernel is queued
// on its stream (strict_ops.hpp), the queues run lazily in a seeded shuffled order
// (strict_streams.hpp), freed memory is poisoned, host code cannot touch device memory, and every
// access is checked by the race detector (race_detector.hpp) against the ordering the queues
// really provide (strict_program_events.cpp).
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "device/device_backend.hpp"
#include "device/strict_ops.hpp"
#include "device/strict_streams.hpp"
#include "ops/host/host_ops.hpp"

namespace wt {

class StrictBackend final : public DeviceBackend {
 public:
  // precision: the host kernels' (train.precision), so a strict run computes what a host run does.
  StrictBackend(uint64_t seed, Precision precision,
                ConvAlgorithm conv_algorithm = ConvAlgorithm::Auto)
      : queues_(seed), kernels_(precision, conv_algorithm) {}
  const char* name() const override { return "strict"; }
  DeviceStreams& streams() override { return queues_; }
  void attach(CachingAllocator& memory) override { memory_ = &memory; }
  const OpsBackend& ops(int stream) override;
  const OpsBackend& kernels() override { return kernels_; }
  void launch(int stream, DeviceWork work) override { queues_.launch(stream, std::move(work)); }
  void run_on_device(const std::function<void()>& work,
                     const std::function<bool()>& progress) override;
  std::unique_ptr<ProgramEvents> program_events(int count, void* comm_stream) override;
  void set_priority(int stream, int priority) override { queues_.set_priority(stream, priority); }
  bool run_one() override { return queues_.run_one(); }
  void drain(const std::function<bool()>& progress) override { queues_.drain(progress); }
  void set_progress(std::function<bool()> progress) override {
    queues_.set_progress(std::move(progress));
  }
  bool counts_synchronizations() const override { return true; }
  uint64_t synchronizations() const override { return queues_.synchronizations(); }
  bool checks_ordering() const override { return true; }
  void describe_issue(const std::string& what) override { queues_.races().set_instruction(what); }
  void raise_deferred() override { queues_.races().raise_deferred(); }
  StrictStreams& queues() { return queues_; }
  bool supports_graphs() const override { return true; }
  // A graph's work begins after all earlier work: its streams wait for stream 0 (the fork a CUDA
  // capture records and each launch of the graph honours), so a step issued while the last one
  // still runs cannot overtake it.
  void begin_graph_capture(int graph) override;
  void end_graph_capture() override { queues_.graph().end_capture(); }
  void begin_graph_replay(int graph) override;
  void end_graph_replay() override { queues_.graph().end_replay(); }
  void join_streams(int into) override;
  // A marker is work on its stream that reads the host's clock when the queues run it.
  int64_t time_marker(int stream) override;
  double seconds_between(int64_t from, int64_t to) override;
  void release_time_marker(int64_t marker) override;

 private:
  StrictStreams queues_;
  HostOps kernels_;
  CachingAllocator* memory_ = nullptr;
  std::vector<std::unique_ptr<StrictOps>> stream_ops_;  // by stream, made on first use
  std::vector<double> marker_times_;   // by marker: when its work ran, NaN until then
  std::vector<int64_t> free_markers_;  // released slots of marker_times_
  // Later work on `waiter` waits (on the queues and for the race detector) for the work issued
  // so far on `producer`. `what` names it in a deadlock's message.
  void order_after(int waiter, int producer, const std::string& what);
  void fork_from_stream0(const std::set<int>& streams);
  int next_event_id_ = 0;  // the race detector's event ids: unique over the device's programs
  std::map<std::pair<int, int>, int> order_events_;  // order_after's: (producer, waiter) -> id
};

}  // namespace wt

#pragma once
// What a device backend provides to the device context (device_context.hpp): its streams as the
// allocator and tensors see them, its kernels as host code issues them on a stream, the program
// events an executor runs Record, Wait and transfers through, and the control of its queues. One
// implementation per backend: host_backend.hpp, strict_backend.hpp, cuda/cuda_backend.hpp.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "device/program_events.hpp"
#include "mem/device_streams.hpp"
#include "ops/ops_backend.hpp"

namespace wt {

class CachingAllocator;

// The stream that communication runs on (after the other streams' events), the way NCCL's kernels
// run on their own stream: higher than any stream a program names.
constexpr int kCommStream = 63;

// Host code's work for a stream: run at once where issuing is executing, queued on a device with
// queues. `ready`, when set, holds it at its stream's head until true (a device-side wait).
struct DeviceWork {
  DeviceWork(std::function<void()> work, std::function<bool()> until = nullptr,
             bool ordered = false, std::string description = std::string())
      : run(std::move(work)),
        ready(std::move(until)),
        issue_ordered(ordered),
        what(std::move(description)) {}
  std::function<void()> run;
  std::function<bool()> ready;  // empty: always ready once at its stream's head
  bool issue_ordered = false;
  std::string what;  // for a deadlock's message: what it is and what it waits for
};

class DeviceBackend {
 public:
  virtual ~DeviceBackend() = default;
  virtual const char* name() const = 0;
  virtual DeviceStreams& streams() = 0;
  // Called once the allocator exists (kernels that reserve workspace take it from there).
  virtual void attach(CachingAllocator& memory) { (void)memory; }
  // The kernels as host code issues them on `stream`.
  virtual const OpsBackend& ops(int stream) = 0;
  // The kernels themselves: what runs inside device work (a queued kernel, a transfer's
  // completion), and what host code runs synchronously after synchronising the device.
  virtual const OpsBackend& kernels() = 0;
  // Runs `work`, host code that issues device work, for `stream` (queued on a device with queues).
  virtual void launch(int stream, DeviceWork work) = 0;
  // Runs `work` as device work on stream 0 and waits for it and for all issued work, `progress`
  // polled meanwhile (evaluation and prepare_evaluation, between steps).
  virtual void run_on_device(const std::function<void()>& work,
                             const std::function<bool()>& progress) = 0;
  // Events for a program of `count` events. comm_stream: the native stream its communicator
  // enqueues operations on (NCCL), ordered there by events; nullptr: the host drives them (MPI).
  virtual std::unique_ptr<ProgramEvents> program_events(int count, void* comm_stream) = 0;
  // A stream's priority (RankProgram::priority's sense: larger is more urgent); before its use.
  virtual void set_priority(int stream, int priority) {
    (void)stream;
    (void)priority;
  }
  // Queued devices: runs one piece of ready work (true if any ran); runs every queue dry,
  // calling `progress` when nothing is ready (false from it: a deadlock, reported).
  virtual bool run_one() { return false; }
  virtual void drain(const std::function<bool()>& progress) { (void)progress; }
  // Called by synchronisations that find nothing ready (a transfer's progress).
  virtual void set_progress(std::function<bool()> progress) { (void)progress; }
  // How many times host code has waited for the device (where it is counted: not on the host
  // device, where every call waits).
  virtual bool counts_synchronizations() const { return false; }
  virtual uint64_t synchronizations() const { return 0; }
  // Diagnostics of a device that checks ordering: what is being issued now (named in its
  // messages), and an error found where nothing could throw, raised now.
  virtual bool checks_ordering() const { return false; }
  virtual void describe_issue(const std::string& what) { (void)what; }
  virtual void raise_deferred() {}
  // Device-side times for traces, where work runs later than it is issued (a GPU, the strict
  // device's lazy queues): a marker recorded on `stream` after its work so far, -1 where the
  // device has no clock of its own (the host device: issue times are run times). Once a
  // synchronisation has passed two markers, the seconds between them on the device's clock;
  // then each marker is released.
  virtual int64_t time_marker(int stream) {
    (void)stream;
    return -1;
  }
  virtual double seconds_between(int64_t from, int64_t to) {
    (void)from;
    (void)to;
    return 0;
  }
  virtual void release_time_marker(int64_t marker) { (void)marker; }
  // Whole-step graphs (device.cuda_graphs; docs/cuda-graphs-plan.md). A captured step's device
  // work is recorded as it is issued; a replayed step's host code issues as usual (its host
  // bookkeeping: allocations, counters) while the device runs the captured work instead: on a
  // GPU the launches are dropped and the graph launched at end_graph_replay; the strict device
  // checks each launch against the capture and runs the captured closure (strict_graph.hpp).
  // Between begin and end the host may not synchronise or query events. A device keeps two
  // graphs, `graph` 0 and 1 (a step's pinned inputs alternate between two sets, so the host can
  // issue the next step while the device still reads this one's: docs/cuda-graphs-plan.md); each
  // replay waits for all earlier work, as a CUDA graph launched on stream 0 does.
  virtual bool supports_graphs() const { return false; }
  virtual void begin_graph_capture(int graph) { (void)graph; }
  virtual void end_graph_capture() {}
  virtual void begin_graph_replay(int graph) { (void)graph; }
  virtual void end_graph_replay() {}
  // Inside a captured or replayed step: later work on `into` waits for all work issued so far on
  // every other stream in the graph (the step's results are copied out after it).
  virtual void join_streams(int into) { (void)into; }
  // The native handle of `stream` (a cudaStream_t), nullptr where there is none.
  virtual void* native_stream(int stream) {
    (void)stream;
    return nullptr;
  }
};

}  // namespace wt

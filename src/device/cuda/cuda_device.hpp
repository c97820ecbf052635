#pragma once
// The CUDA backend's internals (cuda_backend.hpp is the public face): the streams, their events
// and the device memory operations, and the kernels bound to each stream. Included by the CUDA
// backend's own sources only.
#include <cuda_runtime.h>

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "device/device_backend.hpp"
#include "device/graph_replay_ops.hpp"
#include "ops/cuda/cuda_ops.hpp"

namespace wt::cuda {

class CudaDevice final : public DeviceBackend, public DeviceStreams {
 public:
  CudaDevice(int gpu, bool tf32, Precision precision);
  ~CudaDevice() override;
  CudaDevice(const CudaDevice&) = delete;
  CudaDevice& operator=(const CudaDevice&) = delete;

  // DeviceBackend.
  const char* name() const override { return "cuda"; }
  DeviceStreams& streams() override { return *this; }
  const OpsBackend& ops(int stream) override {
    Slot& s = slot(stream);
    if (graph_ == Graph::Replaying) return *s.replay_ops;
    return *s.ops;
  }
  const OpsBackend& kernels() override { return ops(0); }
  void launch(int stream, DeviceWork work) override;
  void run_on_device(const std::function<void()>& work,
                     const std::function<bool()>& progress) override;
  std::unique_ptr<ProgramEvents> program_events(int count, void* comm_stream) override;
  void set_priority(int stream, int priority) override;
  bool counts_synchronizations() const override { return true; }
  uint64_t synchronizations() const override { return synchronizations_; }
  void* native_stream(int stream) override { return slot(stream).handle; }
  // Whole-step graphs (device.cuda_graphs): stream 0 captures in relaxed mode (the allocator may
  // cudaMalloc a graph segment), the other open streams forked from it by an event and joined
  // back before the capture ends; the captured step is launched at once, and each replayed step
  // launches it again after issuing with its launches dropped (GraphReplayOps, no copies, fills
  // or program events).
  bool supports_graphs() const override { return true; }
  void begin_graph_capture(int graph) override;
  void end_graph_capture() override;
  void begin_graph_replay(int graph) override;
  void end_graph_replay() override;
  void join_streams(int into) override;
  bool replaying() const { return graph_ == Graph::Replaying; }
  bool in_graph() const { return graph_ != Graph::Off; }
  // Markers are timing events (cudaEventElapsedTime), apart from the ordering events' pool.
  int64_t time_marker(int stream) override;
  double seconds_between(int64_t from, int64_t to) override;
  void release_time_marker(int64_t marker) override;

  // DeviceStreams.
  StreamEvent record(int stream) override;
  bool completed(const StreamEvent& event) override;
  void synchronize() override;
  bool idle() const override;
  void* allocate_segment(size_t bytes) override;
  void free_segment(void* ptr, size_t bytes) override;
  bool host_addressable() const override { return false; }
  void copy_to_device_async(int stream, void* dst, const void* src, size_t bytes,
                            const char* what) override;
  void* allocate_pinned(size_t bytes) override;
  void free_pinned(void* ptr) override;
  void copy_from_pinned_async(int stream, void* dst, const void* src, size_t bytes,
                              const char* what) override;
  void fill_async(int stream, float* dst, size_t count, float value, const char* what) override;
  void copy_to_pinned_async(int stream, void* dst, const void* src, size_t bytes,
                            const char* what) override;
  void wait(const StreamEvent& event) override;
  void copy_to_host(void* dst, const void* src, size_t bytes) override;
  void copy_to_device(void* dst, const void* src, size_t bytes) override;
  void copy_on_device(void* dst, const void* src, size_t bytes) override;
  void fill(float* dst, size_t count, float value) override;

  cudaStream_t stream(int id) { return slot(id).handle; }
  // The kernels bound to a native stream that is not one of ours (the communicator's).
  const OpsBackend& ops_on(cudaStream_t stream);
  // An event from the pool (cudaEventDisableTiming), and its return.
  cudaEvent_t take_event();
  void give_event(cudaEvent_t event);

 private:
  struct Slot {
    cudaStream_t handle = nullptr;
    std::unique_ptr<CudaOps> ops;
    std::unique_ptr<GraphReplayOps> replay_ops;  // the same, launching nothing
    int priority = 0;                            // the program's sense: larger is more urgent
    uint64_t recorded = 0, completed = 0;
    std::deque<std::pair<uint64_t, cudaEvent_t>> events;  // recorded, not yet seen complete
  };
  Slot& slot(int id);
  const Slot* find(int id) const;
  void open(Slot& s);  // creates its stream (with its priority) and its kernels
  int cuda_priority(int priority) const;
  void refuse_in_graph(const char* what) const;  // the blocking operations' guard

  int gpu_;
  bool tf32_;
  Precision precision_;  // train.precision: the GEMM and convolution inputs
  int least_priority_ = 0, greatest_priority_ = 0;  // CUDA's range: greatest is the most urgent
  std::map<int, Slot> slots_;
  std::map<cudaStream_t, std::unique_ptr<CudaOps>> foreign_;  // ops_on()
  std::vector<cudaStream_t> comm_streams_;  // communicators' (NCCL): joined back at a capture's end
  std::vector<cudaEvent_t> free_events_;
  std::vector<cudaEvent_t> markers_;   // by marker id: timing events
  std::vector<int64_t> free_markers_;  // released ids
  uint64_t synchronizations_ = 0;
  enum class Graph { Off, Capturing, Replaying };
  Graph graph_ = Graph::Off;
  cudaGraphExec_t graph_exec_[2] = {nullptr, nullptr};  // device_backend.hpp: two graphs
  int graph_index_ = 0;                                 // the one captured or replayed
};

}  // namespace wt::cuda

#include "device/cuda/cuda_device.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "device/cuda/cuda_backend.hpp"
#include "tensor/host_access.hpp"
#include "util/cuda_check.hpp"

namespace wt::cuda {

std::unique_ptr<ProgramEvents> make_cuda_program_events(CudaDevice& device, int count,
                                                        cudaStream_t comm);

CudaDevice::CudaDevice(int gpu, bool tf32, Precision precision)
    : gpu_(gpu), tf32_(tf32), precision_(precision) {
  WT_CUDA_CHECK(cudaSetDevice(gpu_));
  WT_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least_priority_, &greatest_priority_));
  // The communication stream is the most urgent: a transfer never waits behind compute that was
  // issued after it.
  slots_[kCommStream].priority = 1 << 20;
}

CudaDevice::~CudaDevice() {
  cudaDeviceSynchronize();  // nothing may run on what goes now; errors are for the run to report
  foreign_.clear();
  for (auto& [id, s] : slots_) {
    for (auto& [sequence, event] : s.events) cudaEventDestroy(event);
    s.ops.reset();
    if (s.handle) cudaStreamDestroy(s.handle);
  }
  for (cudaGraphExec_t exec : graph_exec_)
    if (exec) cudaGraphExecDestroy(exec);
  for (cudaEvent_t e : free_events_) cudaEventDestroy(e);
  for (cudaEvent_t e : markers_) cudaEventDestroy(e);
}

int CudaDevice::cuda_priority(int priority) const {
  // CUDA counts the other way round (greatest_priority_ is the smallest number). The default
  // priority 0 sits one step above the least urgent, so that a background stream (-1) can go
  // below it; more urgent streams take the steps above, as far as the range goes.
  const int above_least = std::max(greatest_priority_, least_priority_ - 1);
  if (priority < 0) return least_priority_;
  return std::max(greatest_priority_, above_least - priority);
}

void CudaDevice::open(Slot& s) {
  WT_CUDA_CHECK(
      cudaStreamCreateWithPriority(&s.handle, cudaStreamNonBlocking, cuda_priority(s.priority)));
  s.ops = std::make_unique<CudaOps>(s.handle, tf32_, precision_);
  s.replay_ops = std::make_unique<GraphReplayOps>(*s.ops);
}

CudaDevice::Slot& CudaDevice::slot(int id) {
  if (id < 0) throw std::logic_error("negative stream " + std::to_string(id));
  Slot& s = slots_[id];
  if (!s.handle) open(s);
  return s;
}

const CudaDevice::Slot* CudaDevice::find(int id) const {
  auto it = slots_.find(id);
  return it == slots_.end() ? nullptr : &it->second;
}

void CudaDevice::set_priority(int stream, int priority) {
  Slot& s = slots_[stream];
  if (s.priority == priority) return;
  s.priority = priority;
  if (!s.handle) return;
  // Made before the program named its priority (model initialisation uses stream 0): remade.
  // A graph captured earlier (an auto.measure trial's) addresses the buffers of the stream's ops
  // object, which goes with it: the graph goes too, and replaying it is refused until a capture.
  WT_CUDA_CHECK(cudaStreamSynchronize(s.handle));
  if (graph_exec_[0] || graph_exec_[1]) {
    WT_CUDA_CHECK(cudaDeviceSynchronize());  // a launch of one may still run on stream 0
    for (cudaGraphExec_t& exec : graph_exec_) {
      if (exec) WT_CUDA_CHECK(cudaGraphExecDestroy(exec));
      exec = nullptr;
    }
  }
  s.ops.reset();
  WT_CUDA_CHECK(cudaStreamDestroy(s.handle));
  s.handle = nullptr;
  open(s);
}

const OpsBackend& CudaDevice::ops_on(cudaStream_t stream) {
  auto& ops = foreign_[stream];
  if (!ops) ops = std::make_unique<CudaOps>(stream, tf32_, precision_);
  return *ops;
}

cudaEvent_t CudaDevice::take_event() {
  if (!free_events_.empty()) {
    cudaEvent_t e = free_events_.back();
    free_events_.pop_back();
    return e;
  }
  cudaEvent_t e = nullptr;
  WT_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  return e;
}

void CudaDevice::give_event(cudaEvent_t event) { free_events_.push_back(event); }

int64_t CudaDevice::time_marker(int stream) {
  int64_t marker = int64_t(markers_.size());
  if (!free_markers_.empty()) {
    marker = free_markers_.back();
    free_markers_.pop_back();
  } else {
    cudaEvent_t e = nullptr;
    WT_CUDA_CHECK(cudaEventCreate(&e));  // with timing
    markers_.push_back(e);
  }
  WT_CUDA_CHECK(cudaEventRecord(markers_[size_t(marker)], slot(stream).handle));
  return marker;
}

double CudaDevice::seconds_between(int64_t from, int64_t to) {
  float ms = 0;
  WT_CUDA_CHECK(cudaEventElapsedTime(&ms, markers_.at(size_t(from)), markers_.at(size_t(to))));
  return double(ms) * 1e-3;
}

void CudaDevice::release_time_marker(int64_t marker) {
  if (marker >= 0 && size_t(marker) < markers_.size()) free_markers_.push_back(marker);
}

void CudaDevice::launch(int stream, DeviceWork work) {
  // Issuing is launching: the work is host code that launches its kernels on the stream now. A
  // readiness condition would need the host to wait, which device work never does here.
  if (work.ready) throw std::logic_error("cuda: device work with a host-side readiness test");
  (void)slot(stream);
  DeviceWorkScope device_work;
  work.run();
}

void CudaDevice::run_on_device(const std::function<void()>& work,
                               const std::function<bool()>& progress) {
  {
    DeviceWorkScope device_work;
    work();
  }
  synchronize();
  if (progress)
    while (progress()) {
    }
}

StreamEvent CudaDevice::record(int stream) {
  Slot& s = slot(stream);
  // Inside a graphed step there is no event to record (a captured record is no real event): the
  // sequence counts on, completed once a real event recorded after it is (the step's read-back,
  // or the event after the graph's launch). Only the graph's own memory asks for these, and never
  // queries them.
  if (graph_ != Graph::Off) return {stream, ++s.recorded};
  cudaEvent_t e = take_event();
  WT_CUDA_CHECK(cudaEventRecord(e, s.handle));
  s.events.emplace_back(++s.recorded, e);
  return {stream, s.recorded};
}

bool CudaDevice::completed(const StreamEvent& event) {
  auto it = slots_.find(event.stream);
  if (it == slots_.end()) return true;
  Slot& s = it->second;
  // Events on one stream complete in order: retire the completed ones from the front.
  while (s.completed < event.sequence && !s.events.empty()) {
    const cudaError_t rc = cudaEventQuery(s.events.front().second);
    if (rc == cudaErrorNotReady) break;
    WT_CUDA_CHECK(rc);
    s.completed = s.events.front().first;
    give_event(s.events.front().second);
    s.events.pop_front();
  }
  return s.completed >= event.sequence;
}

void CudaDevice::synchronize() {
  ++synchronizations_;
  WT_CUDA_CHECK(cudaDeviceSynchronize());
  for (auto& [id, s] : slots_) {
    for (auto& [sequence, event] : s.events) give_event(event);
    s.events.clear();
    s.completed = s.recorded;
  }
}

bool CudaDevice::idle() const {
  for (const auto& [id, s] : slots_) {
    if (!s.handle) continue;
    const cudaError_t rc = cudaStreamQuery(s.handle);
    if (rc == cudaErrorNotReady) return false;
    WT_CUDA_CHECK(rc);
  }
  return true;
}

void* CudaDevice::allocate_segment(size_t bytes) {
  void* ptr = nullptr;
  const cudaError_t rc = cudaMalloc(&ptr, bytes);
  if (rc == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();  // not sticky: the allocator frees its cache and tries again
    return nullptr;
  }
  WT_CUDA_CHECK(rc);
  return ptr;
}

void CudaDevice::free_segment(void* ptr, size_t) { WT_CUDA_CHECK(cudaFree(ptr)); }

void CudaDevice::copy_to_device_async(int stream, void* dst, const void* src, size_t bytes,
                                      const char* what) {
  if (replaying()) return;  // the graph's copy node does it
  // A captured copy node reads `src` at each replay, when a pageable source is long gone.
  if (graph_ == Graph::Capturing)
    throw std::logic_error(std::string("cuda: ") + what +
                           ", a copy from pageable host memory, while a step is captured as a "
                           "graph; copy through a fixed pinned buffer");
  // From pageable memory the call returns once `src` is staged, so the caller may drop it.
  WT_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, slot(stream).handle));
}

void* CudaDevice::allocate_pinned(size_t bytes) {
  void* ptr = nullptr;
  const cudaError_t rc = cudaMallocHost(&ptr, bytes);
  if (rc == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    return nullptr;
  }
  WT_CUDA_CHECK(rc);
  return ptr;
}

void CudaDevice::free_pinned(void* ptr) { WT_CUDA_CHECK(cudaFreeHost(ptr)); }

void CudaDevice::copy_from_pinned_async(int stream, void* dst, const void* src, size_t bytes,
                                        const char*) {
  if (replaying()) return;  // the graph's copy node reads the same pinned buffer
  // From pinned memory the DMA reads `src` later: the caller keeps it until the copy's event.
  WT_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, slot(stream).handle));
}

void CudaDevice::copy_to_pinned_async(int stream, void* dst, const void* src, size_t bytes,
                                      const char*) {
  if (replaying()) return;  // the graph's copy node writes the same pinned buffer
  WT_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, slot(stream).handle));
}

void CudaDevice::wait(const StreamEvent& event) {
  refuse_in_graph("waiting for an event");
  ++synchronizations_;
  Slot& s = slot(event.stream);
  // Events on one stream complete in order: wait for the first one recorded at or after it.
  while (s.completed < event.sequence && !s.events.empty()) {
    WT_CUDA_CHECK(cudaEventSynchronize(s.events.front().second));
    s.completed = s.events.front().first;
    give_event(s.events.front().second);
    s.events.pop_front();
  }
  if (s.completed < event.sequence)
    throw std::logic_error("cuda: waiting for an event on stream " + std::to_string(event.stream) +
                           " that was never recorded");
}

void CudaDevice::fill_async(int stream, float* dst, size_t count, float value, const char*) {
  ops(stream).fill(value, dst, int64_t(count));  // replaying: GraphReplayOps, nothing
}

// The blocking copies and fill synchronise the device first: never inside a graphed step (CUDA
// refuses it in a capture; in a replay it would run before the graph it should follow).
void CudaDevice::refuse_in_graph(const char* what) const {
  if (in_graph())
    throw std::logic_error(std::string("cuda: ") + what +
                           ", which synchronises the device, inside a step captured or replayed "
                           "as a graph (device.cuda_graphs); issue it on the step's stream");
}

void CudaDevice::copy_to_host(void* dst, const void* src, size_t bytes) {
  refuse_in_graph("a blocking copy to the host");
  synchronize();
  WT_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
}

void CudaDevice::copy_to_device(void* dst, const void* src, size_t bytes) {
  refuse_in_graph("a blocking copy to the device");
  synchronize();
  WT_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
  WT_CUDA_CHECK(cudaDeviceSynchronize());  // from pageable memory the DMA may still run
}

void CudaDevice::copy_on_device(void* dst, const void* src, size_t bytes) {
  refuse_in_graph("a blocking copy on the device");
  synchronize();
  WT_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice));
  WT_CUDA_CHECK(cudaDeviceSynchronize());
}

void CudaDevice::fill(float* dst, size_t count, float value) {
  refuse_in_graph("a blocking fill");
  synchronize();
  ops(0).fill(value, dst, int64_t(count));
  WT_CUDA_CHECK(cudaStreamSynchronize(stream(0)));
}

void CudaDevice::begin_graph_capture(int graph) {
  graph_index_ = graph & 1;
  cudaGraphExec_t& exec = graph_exec_[graph_index_];
  if (exec) {
    WT_CUDA_CHECK(cudaStreamSynchronize(stream(0)));  // a launch of it may still run
    WT_CUDA_CHECK(cudaGraphExecDestroy(exec));
  }
  exec = nullptr;
  cudaStream_t origin = stream(0);
  WT_CUDA_CHECK(cudaStreamBeginCapture(origin, cudaStreamCaptureModeRelaxed));
  graph_ = Graph::Capturing;
  // Work on another stream joins the capture only through an event from a captured stream: every
  // stream used so far is forked (the strict device's model: strict_graph.hpp).
  cudaEvent_t fork = take_event();
  WT_CUDA_CHECK(cudaEventRecord(fork, origin));
  for (auto& [id, s] : slots_) {
    if (id == 0 || id == kCommStream || !s.handle) continue;
    WT_CUDA_CHECK(cudaStreamWaitEvent(s.handle, fork, 0));
  }
  give_event(fork);
}

void CudaDevice::join_streams(int into) {
  if (graph_ != Graph::Capturing) return;  // a replay: the graph holds the joins
  // Every stream in the capture, the forked ones and any that joined it by waiting for one of
  // its events. A communicator's stream (NCCL's) is in it once a transfer waited for a captured
  // event.
  cudaStream_t target = stream(into);
  std::vector<cudaStream_t> captured = comm_streams_;
  for (auto& [id, s] : slots_)
    if (id != into && s.handle) captured.push_back(s.handle);
  for (cudaStream_t handle : captured) {
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    WT_CUDA_CHECK(cudaStreamIsCapturing(handle, &status));
    if (status != cudaStreamCaptureStatusActive) continue;
    cudaEvent_t join = take_event();
    WT_CUDA_CHECK(cudaEventRecord(join, handle));
    WT_CUDA_CHECK(cudaStreamWaitEvent(target, join, 0));
    give_event(join);
  }
}

void CudaDevice::end_graph_capture() {
  cudaStream_t origin = stream(0);
  // Joined back: the capture ends when every stream's work does (CUDA refuses to end a capture
  // with a stream left unjoined).
  join_streams(0);
  cudaGraph_t graph = nullptr;
  WT_CUDA_CHECK(cudaStreamEndCapture(origin, &graph));
  graph_ = Graph::Off;
  // Each kernel node keeps the priority of the stream it was captured on (a background stream's
  // below the foreground's), where a plain instantiation would run all at the launching stream's.
  cudaGraphExec_t& exec = graph_exec_[graph_index_];
  const cudaError_t instantiated =
      cudaGraphInstantiate(&exec, graph, cudaGraphInstantiateFlagUseNodePriority);
  WT_CUDA_CHECK(cudaGraphDestroy(graph));  // the executable graph, if made, keeps what it needs
  if (instantiated != cudaSuccess) exec = nullptr;  // nothing for the destructor to free
  WT_CUDA_CHECK(instantiated);
  WT_CUDA_CHECK(cudaGraphLaunch(exec, origin));  // the captured step itself runs now
}

void CudaDevice::begin_graph_replay(int graph) {
  graph_index_ = graph & 1;
  if (!graph_exec_[graph_index_])
    throw std::logic_error("cuda: graph " + std::to_string(graph_index_) +
                           " replayed before its capture");
  graph_ = Graph::Replaying;
}

void CudaDevice::end_graph_replay() {
  graph_ = Graph::Off;
  // Launched on stream 0, the graph waits for all earlier work there, the other graph's launch
  // included, so a step issued while the last one runs follows it.
  WT_CUDA_CHECK(cudaGraphLaunch(graph_exec_[graph_index_], stream(0)));
}

std::unique_ptr<ProgramEvents> CudaDevice::program_events(int count, void* comm_stream) {
  auto comm = static_cast<cudaStream_t>(comm_stream);
  if (comm && std::find(comm_streams_.begin(), comm_streams_.end(), comm) == comm_streams_.end())
    comm_streams_.push_back(comm);
  return make_cuda_program_events(*this, count, comm);
}

std::unique_ptr<DeviceBackend> make_cuda_backend(int gpu, bool tf32, Precision precision,
                                                 size_t* memory_limit) {
  auto device = std::make_unique<CudaDevice>(gpu, tf32, precision);
  if (*memory_limit == 0) {
    size_t free_bytes = 0, total_bytes = 0;
    WT_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    const size_t margin = std::max(kMemoryMargin, total_bytes / 20);
    *memory_limit = free_bytes > 2 * margin ? free_bytes - margin : free_bytes / 2;
  }
  return device;
}

}  // namespace wt::cuda

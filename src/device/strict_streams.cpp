#include "device/strict_streams.hpp"

#include <algorithm>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <vector>

#include "tensor/host_access.hpp"

namespace wt {

namespace {
constexpr uint64_t kNotOrdered = ~uint64_t(0);
}

StrictStreams::StrictStreams(uint64_t seed) : rng_(seed) {}

StrictStreams::Queue& StrictStreams::queue(int stream) {
  if (stream < 0) throw std::logic_error("negative stream " + std::to_string(stream));
  if (static_cast<size_t>(stream) >= queues_.size()) queues_.resize(size_t(stream) + 1);
  return queues_[size_t(stream)];
}

void StrictStreams::set_priority(int stream, int priority) { queue(stream).priority = priority; }

std::vector<int> StrictStreams::streams_in_use() const {
  std::vector<int> used;
  for (size_t s = 0; s < queues_.size(); ++s)
    if (queues_[s].used && int(s) != kCommStream) used.push_back(int(s));
  return used;
}

int StrictStreams::priority(int stream) const {
  if (stream < 0 || static_cast<size_t>(stream) >= queues_.size()) return 0;
  return queues_[size_t(stream)].priority;
}

void StrictStreams::launch(int stream, DeviceWork work) {
  // The poisoning of freed memory is the strict device's own check, no CUDA work: a stream
  // outside the capture may take it.
  if (graph_.active()) graph_.on_launch(stream, work, !retiring_);
  Queue& q = queue(stream);
  q.used = q.used || !retiring_;
  q.issue_index.push_back(work.issue_ordered ? ordered_issued_++ : kNotOrdered);
  q.work.push_back(std::move(work));
  ++q.issued;
}

bool StrictStreams::ready_at_head(const Queue& q) const {
  if (q.work.empty()) return false;
  const uint64_t index = q.issue_index.front();
  if (index != kNotOrdered && index != ordered_started_) return false;
  return !q.work.front().ready || q.work.front().ready();
}

bool StrictStreams::run_ahead() {
  bool ran = false;
  while (run_one(false)) ran = true;
  return ran;
}

bool StrictStreams::run_one(bool communication) {
  if (running()) return false;  // work does not run work
  // The ready streams of the highest priority among the ready ones. With every priority equal
  // this is every ready stream, and the seeded draw below is what it was before priorities.
  std::vector<int> ready;
  int top = 0;
  for (size_t s = 0; s < queues_.size(); ++s) {
    if (!ready_at_head(queues_[s])) continue;
    if (!communication && queues_[s].issue_index.front() != kNotOrdered) continue;
    const int p = queues_[s].priority;
    if (ready.empty() || p > top) {
      ready.clear();
      top = p;
    }
    if (p == top) ready.push_back(static_cast<int>(s));
  }
  if (ready.empty()) return false;
  run_head(ready[std::uniform_int_distribution<size_t>(0, ready.size() - 1)(rng_)]);
  return true;
}

void StrictStreams::run_head(int s) {
  Queue& q = queues_[size_t(s)];
  DeviceWork work = std::move(q.work.front());
  if (q.issue_index.front() != kNotOrdered) ++ordered_started_;
  q.work.pop_front();
  q.issue_index.pop_front();
  running_stream_ = s;
  try {
    DeviceWorkScope device_work;
    work.run();
  } catch (...) {
    running_stream_ = -1;
    throw;
  }
  running_stream_ = -1;
  ++q.executed;
  ++executed_total_;
}

bool StrictStreams::idle() const {
  for (const Queue& q : queues_)
    if (!q.work.empty()) return false;
  return true;
}

void StrictStreams::drain(const std::function<bool()>& progress) {
  while (!idle()) {
    if (run_one()) continue;
    if (progress && progress()) continue;
    std::string heads;
    for (size_t s = 0; s < queues_.size(); ++s)
      if (!queues_[s].work.empty())
        heads +=
            " stream " + std::to_string(s) + " (" + std::to_string(queues_[s].work.size()) +
            " queued" +
            (!queues_[s].work.front().what.empty() ? ", its next is " + queues_[s].work.front().what
             : queues_[s].work.front().ready       ? ", its next waits for an event"
             : queues_[s].issue_index.front() != kNotOrdered
                 ? ", its next is communication issued after communication not yet started"
                 : std::string()) +
            ")";
    throw std::logic_error("strict device: queued work can never run (deadlock):" + heads);
  }
}

StreamEvent StrictStreams::record(int stream) {
  const Queue& q = queue(stream);
  if (running_stream_ == stream) return {stream, q.executed + 1};
  return {stream, q.issued};
}

void StrictStreams::refuse_in_graph(const char* what) const {
  if (!graph_.active() || running()) return;
  throw GraphReplayError(std::string("strict device: ") + what +
                         " while a step is captured as a graph (device.cuda_graphs): CUDA "
                         "refuses it during a capture, and a replayed step cannot wait for "
                         "the host; issue it before or after the step");
}

bool StrictStreams::completed(const StreamEvent& event) {
  refuse_in_graph("an event query (the host asking whether device work has finished)");
  if (completed_always_) return true;
  if (queue(event.stream).executed < event.sequence) return false;
  races_.host_saw_stream(event.stream, event.sequence);  // the host issues what follows knowing it
  return true;
}

void StrictStreams::synchronize() {
  if (running()) return;
  refuse_in_graph("a device synchronisation");
  ++synchronizations_;
  drain(progress_);
  races_.synchronized();
}

void StrictStreams::before_segment_release() {
  // Unwinding (a failing run's teardown) neither refuses nor runs work: the error in flight is
  // the one to report, and its queued work will never run.
  if (std::uncaught_exceptions() > 0) return;
  refuse_in_graph("returning a memory segment to the system (cudaFree)");
  if (!idle()) synchronize();
}

void StrictStreams::free_segment(void* ptr, size_t bytes) {
  if (std::uncaught_exceptions() == 0)
    refuse_in_graph("returning a memory segment to the system (cudaFree)");
  DeviceStreams::free_segment(ptr, bytes);
}

void StrictStreams::retire(int stream, void* ptr, size_t bytes) {
  // Freed by running work (which dropped the last reference): poisoned now, as part of it.
  // Freed by host code: where the free stands in its stream, after the work issued before it.
  // A free runs in a destructor: an ordering error found here is thrown by the executor next.
  struct Retiring {  // reset however write_on_stream leaves
    bool& flag;
    explicit Retiring(bool& f) : flag(f) { flag = true; }
    ~Retiring() { flag = false; }
  } retiring(retiring_);
  try {
    write_on_stream(stream, ptr, bytes, "the poisoning of freed memory",
                    [ptr, bytes] { std::memset(ptr, 0xff, bytes); });
  } catch (const OrderingError& e) {
    races_.defer(e);
  }
}

void StrictStreams::write_on_stream(int stream, void* dst, size_t bytes, const char* what,
                                    std::function<void()> kernel) {
  if (running()) {  // device work writing: part of it
    races_.access(running_stream_, running_sequence(), dst, bytes, true, what);
    return kernel();
  }
  races_.access(stream, next_sequence(stream), dst, bytes, true, what);
  graph_.note_kernel(what);
  graph_.note_access(dst, bytes, true);
  launch(stream, DeviceWork{std::move(kernel), nullptr, false});
}

void StrictStreams::blocking(const std::function<void()>& kernel) {
  if (!in_device_work()) synchronize();
  DeviceWorkScope device_work;
  kernel();
}

void StrictStreams::copy_to_device_async(int stream, void* dst, const void* src, size_t bytes,
                                         const char* what) {
  if (in_device_work()) return (void)std::memcpy(dst, src, bytes);
  if (graph_.mode() == StrictGraph::Mode::Capturing)
    throw GraphReplayError(std::string("strict device: ") + what +
                           ", a copy from pageable host memory, while a step is captured as a "
                           "graph: the graph's copy would read that host address whenever a "
                           "replay runs, long after the source is gone; copy through a fixed "
                           "pinned buffer (as the batches and labels do)");
  const auto* from = static_cast<const char*>(src);
  write_on_stream(stream, dst, bytes, what, [dst, staged = std::vector<char>(from, from + bytes)] {
    std::memcpy(dst, staged.data(), staged.size());
  });
}

namespace {
uint64_t fnv1a(const void* data, size_t bytes) {
  uint64_t h = 1469598103934665603ull;
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}
}  // namespace

void* StrictStreams::allocate_pinned(size_t bytes) {
  void* ptr = DeviceStreams::allocate_pinned(bytes);
  if (ptr) pinned_[static_cast<const char*>(ptr)] = bytes;
  return ptr;
}

void StrictStreams::free_pinned(void* ptr) {
  pinned_.erase(static_cast<const char*>(ptr));
  DeviceStreams::free_pinned(ptr);
}

bool StrictStreams::pinned(const void* ptr) const {
  const auto* p = static_cast<const char*>(ptr);
  auto it = pinned_.upper_bound(p);
  if (it == pinned_.begin()) return false;
  --it;
  return p < it->first + it->second;
}

std::function<void()> StrictStreams::reading_pinned(const void* src, size_t bytes,
                                                    const std::string& what,
                                                    const std::string& reader,
                                                    std::function<void()> use) {
  // What the host wrote before issuing the work is what the work must read. Kept by address in
  // issue order, not in the closure: a replayed graph runs the captured closure for the host's
  // new issue. Readers of one buffer run in the order they were issued (one stream's copies).
  pinned_issued_[src].push_back(fnv1a(src, bytes));
  graph_.note_access(src, bytes, false);  // a graph's node reads the captured buffer
  return [this, src, bytes, what, reader, use = std::move(use)] {
    std::deque<uint64_t>& issued = pinned_issued_[src];
    const uint64_t expected = issued.empty() ? 0 : issued.front();
    if (!issued.empty()) issued.pop_front();
    if (fnv1a(src, bytes) != expected)
      races_.defer(OrderingError(
          "the host rewrote the pinned source of " + what + " after issuing " + reader +
          " and before it ran: a pinned buffer may be reused only once an event recorded after "
          "its reader has completed"));
    use();
  };
}

void StrictStreams::copy_from_pinned_async(int stream, void* dst, const void* src, size_t bytes,
                                           const char* what) {
  if (in_device_work()) return (void)std::memcpy(dst, src, bytes);
  write_on_stream(stream, dst, bytes, what,
                  reading_pinned(src, bytes, what, "the copy",
                                 [dst, src, bytes] { std::memcpy(dst, src, bytes); }));
}

void StrictStreams::copy_to_pinned_async(int stream, void* dst, const void* src, size_t bytes,
                                         const char* what) {
  if (in_device_work()) return (void)std::memcpy(dst, src, bytes);
  races_.access(stream, next_sequence(stream), src, bytes, false, what);
  graph_.note_access(src, bytes, false);
  write_on_stream(stream, dst, bytes, what, [dst, src, bytes] { std::memcpy(dst, src, bytes); });
}

void StrictStreams::host_reads_pinned(const void* ptr, size_t bytes, const char* what) {
  races_.host_read(ptr, bytes, what);
}

void StrictStreams::wait(const StreamEvent& event) {
  refuse_in_graph("waiting for an event (cudaEventSynchronize)");
  ++synchronizations_;
  while (executed(event.stream) < event.sequence) {
    if (run_one()) continue;
    if (progress_ && progress_()) continue;
    throw std::logic_error("strict device: waiting for stream " + std::to_string(event.stream) +
                           " to run its work up to " + std::to_string(event.sequence) +
                           ", which can never run (deadlock)");
  }
  races_.host_saw_stream(event.stream, event.sequence);
}

void StrictStreams::fill_async(int stream, float* dst, size_t count, float value,
                               const char* what) {
  if (in_device_work()) return std::fill(dst, dst + count, value);
  write_on_stream(stream, dst, count * sizeof(float), what,
                  [dst, count, value] { std::fill(dst, dst + count, value); });
}

void StrictStreams::host_side(const std::function<void()>& declare,
                              const std::function<void()>& kernel) {
  if (in_device_work()) return kernel();  // part of running device work
  synchronize();
  declare();
  DeviceWorkScope device_work;
  kernel();
}

void StrictStreams::copy_to_host(void* dst, const void* src, size_t bytes) {
  host_side([&] { races_.host_read(src, bytes, "a staged copy to the host"); },
            [&] { std::memcpy(dst, src, bytes); });
}

void StrictStreams::copy_to_device(void* dst, const void* src, size_t bytes) {
  host_side([&] { races_.host_write(dst, bytes, "a staged copy from the host"); },
            [&] { std::memcpy(dst, src, bytes); });
}

void StrictStreams::copy_on_device(void* dst, const void* src, size_t bytes) {
  host_side(
      [&] {
        races_.host_read(src, bytes, "a blocking copy's read");
        races_.host_write(dst, bytes, "a blocking copy's write");
      },
      [&] { std::memcpy(dst, src, bytes); });
}

void StrictStreams::fill(float* dst, size_t count, float value) {
  host_side([&] { races_.host_write(dst, count * sizeof(float), "a blocking fill"); },
            [&] { std::fill(dst, dst + count, value); });
}

void StrictStreams::host_write(const void* ptr, size_t bytes, const char* what) {
  races_.host_write(ptr, bytes, what);
}

void StrictStreams::name_memory(const void* ptr, size_t bytes, const std::string& name) {
  races_.name_memory(ptr, bytes, name);
}

}  // namespace wt

#pragma once
// How the allocator learns that work issued on a stream has finished. The device context
// implements it: on the host, issuing is executing, so every event has completed when it is
// recorded; a CUDA device records cudaEvents; a device with asynchronous queues answers from its
// queues. Events on one stream complete in the order they were recorded.
#include <cstdint>
#include <functional>
#include <string>

namespace wt {

struct StreamEvent {
  int stream = 0;
  uint64_t sequence = 0;  // increasing per stream: a later event covers an earlier one
};

class StreamEvents {
 public:
  virtual ~StreamEvents() = default;
  // An event after all work issued on `stream` so far.
  virtual StreamEvent record(int stream) = 0;
  virtual bool completed(const StreamEvent& event) = 0;
  // Waits until every stream's issued work has finished (a device synchronisation).
  virtual void synchronize() = 0;
  // Lets the device run the work it can run now, transfers' starts apart, as a GPU runs ahead of
  // the host; true if any ran. (Where issuing is executing, nothing is ever waiting.)
  virtual bool run_ahead() { return false; }
  // Whether no issued work is waiting to run (a synchronisation would do nothing).
  virtual bool idle() const { return true; }
  // A block freed on `stream` whose memory goes back to the pool: a device that poisons freed
  // memory does it at the free's point in the stream.
  virtual void retire(int stream, void* ptr, size_t bytes) {
    (void)stream;
    (void)ptr;
    (void)bytes;
  }
  // Runs `kernel`, which writes [dst, dst + bytes) and nothing else, once `stream`'s work issued
  // so far has run (at once where issuing is executing): a copy in from the host, a fill. `what`
  // names it in a device's diagnostics.
  virtual void write_on_stream(int stream, void* dst, size_t bytes, const char* what,
                               std::function<void()> kernel) {
    (void)stream;
    (void)dst;
    (void)bytes;
    (void)what;
    kernel();
  }
  // The host writes a freed block directly (poison), believing every use of it is over.
  virtual void host_write(const void* ptr, size_t bytes, const char* what) {
    (void)ptr;
    (void)bytes;
    (void)what;
  }
  // Names [ptr, ptr + bytes) in a device's diagnostics (an allocation, a tensor's label).
  virtual void name_memory(const void* ptr, size_t bytes, const std::string& name) {
    (void)ptr;
    (void)bytes;
    (void)name;
  }
};

// The host device: work runs when it is issued, on the rank's own thread.
class ImmediateStreamEvents final : public StreamEvents {
 public:
  StreamEvent record(int stream) override { return {stream, ++sequence_}; }
  bool completed(const StreamEvent&) override { return true; }
  void synchronize() override {}

 private:
  uint64_t sequence_ = 0;
};

}  // namespace wt

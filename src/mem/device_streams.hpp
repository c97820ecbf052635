#pragma once
// The device as the allocator and tensors see it: its streams' events (how the allocator learns
// that work issued on a stream has finished), its memory (the segments the allocator cuts blocks
// from) and the copies and fills that host code issues on tensors. The device context implements
// it once per backend: on the host, issuing is executing, so every event has completed when it
// is recorded and a copy is a memcpy; the strict device answers from its queues; a CUDA device
// records cudaEvents and copies with cudaMemcpyAsync. Events on one stream complete in the order
// they were recorded.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>

namespace wt {

struct StreamEvent {
  int stream = 0;
  uint64_t sequence = 0;  // increasing per stream: a later event covers an earlier one
};

class DeviceStreams {
 public:
  virtual ~DeviceStreams() = default;
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

  // Memory: a segment of `bytes` from the system (64-byte aligned at least), nullptr when the
  // system refuses; and its return.
  virtual void* allocate_segment(size_t bytes) { return std::aligned_alloc(64, bytes); }
  virtual void free_segment(void* ptr, size_t bytes) {
    (void)bytes;
    std::free(ptr);
  }
  // Before segments are returned (each return is a cudaFree, which waits for the whole device).
  virtual void before_segment_release() {}
  // Whether host code may read and write this device's memory directly (the host device).
  virtual bool host_addressable() const { return true; }

  // Tensor copies and fills. The *_async ones are issued on `stream`, after its work so far,
  // without the host waiting (cudaMemcpyAsync from pageable memory: `src` may go once the call
  // returns). The others are blocking: they see all work issued before them and have finished
  // when they return (a staged copy; a kernel host code waits for). `what` names the operation
  // in a device's diagnostics.
  virtual void copy_to_device_async(int stream, void* dst, const void* src, size_t bytes,
                                    const char* what) {
    (void)stream;
    (void)what;
    std::memcpy(dst, src, bytes);
  }
  // Pinned host memory (cudaMallocHost on a GPU): a buffer the device copies from without the
  // driver staging it, so copy_from_pinned_async returns at once. nullptr when the system refuses.
  virtual void* allocate_pinned(size_t bytes) {
    return std::aligned_alloc(64, (bytes + 63) / 64 * 64);
  }
  virtual void free_pinned(void* ptr) { std::free(ptr); }
  // copy_to_device_async from a pinned buffer: the device reads `src` when the copy runs, not
  // when it is issued, so the host must leave it unchanged until an event recorded on `stream`
  // after the copy has completed.
  virtual void copy_from_pinned_async(int stream, void* dst, const void* src, size_t bytes,
                                      const char* what) {
    copy_to_device_async(stream, dst, src, bytes, what);
  }
  virtual void fill_async(int stream, float* dst, size_t count, float value, const char* what) {
    (void)stream;
    (void)what;
    for (size_t i = 0; i < count; ++i) dst[i] = value;
  }
  // A copy from device memory into pinned host memory on `stream`, after its work so far (a
  // step's results on their way back): the host may read `dst` only once it has waited for an
  // event recorded on `stream` after the copy (wait()), and says so with host_reads_pinned().
  virtual void copy_to_pinned_async(int stream, void* dst, const void* src, size_t bytes,
                                    const char* what) {
    (void)stream;
    (void)what;
    std::memcpy(dst, src, bytes);
  }
  virtual void host_reads_pinned(const void* ptr, size_t bytes, const char* what) {
    (void)ptr;
    (void)bytes;
    (void)what;
  }
  // Waits until `event` has completed (cudaEventSynchronize): one synchronisation with the
  // device, which other streams' work may outlive.
  virtual void wait(const StreamEvent& event) {
    if (!completed(event)) synchronize();
  }
  virtual void copy_to_host(void* dst, const void* src, size_t bytes) {
    std::memcpy(dst, src, bytes);
  }
  virtual void copy_to_device(void* dst, const void* src, size_t bytes) {
    std::memcpy(dst, src, bytes);
  }
  virtual void copy_on_device(void* dst, const void* src, size_t bytes) {
    std::memcpy(dst, src, bytes);
  }
  virtual void fill(float* dst, size_t count, float value) {
    for (size_t i = 0; i < count; ++i) dst[i] = value;
  }
};

// The host device: work runs when it is issued, on the rank's own thread.
class HostStreams final : public DeviceStreams {
 public:
  StreamEvent record(int stream) override { return {stream, ++sequence_}; }
  bool completed(const StreamEvent&) override { return true; }
  void synchronize() override {}

 private:
  uint64_t sequence_ = 0;
};

}  // namespace wt

#pragma once
// One per rank, shared by the rank's jobs: the device's memory (one caching allocator under one
// budget, with an account per job) and its streams' events. A job, the executor, the layers and
// the data path reach the device through it; nothing about the device is process-wide.
// `device.kind = "host"` (the only kind the executor runs today): a CPU core, where work on a
// stream is done when it is issued.
#include <cstddef>

#include "mem/caching_allocator.hpp"
#include "mem/stream_events.hpp"

namespace wt {

class DeviceContext {
 public:
  // memory_limit: the budget in bytes (device.memory_limit; 0 = none).
  explicit DeviceContext(size_t memory_limit = 0);
  DeviceContext(const DeviceContext&) = delete;
  DeviceContext& operator=(const DeviceContext&) = delete;

  CachingAllocator& allocator() { return allocator_; }
  StreamEvents& events() { return events_; }

 private:
  ImmediateStreamEvents events_;  // before allocator_, which uses it
  CachingAllocator allocator_;
};

}  // namespace wt

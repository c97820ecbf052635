#pragma once
// One per rank, shared by the rank's jobs: the device's memory (one caching allocator under one
// budget, with an account per job), its kernels (the ops backend) and its streams. A job, the
// executor, the layers and the data path reach the device through it; nothing about the device is
// process-wide.
//
// Kinds (device.kind):
//   host:   a CPU core; work on a stream runs when it is issued.
//   strict: the host's kernels under a GPU's rules (strict_streams.hpp, tensor/host_access.hpp):
//           device memory that host code cannot touch except through staged copies, streams that
//           run lazily and in a seeded arbitrary order between synchronisation points, freed
//           memory poisoned with NaN.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "device/strict_ops.hpp"
#include "device/strict_streams.hpp"
#include "mem/caching_allocator.hpp"
#include "mem/stream_events.hpp"
#include "ops/host/host_ops.hpp"

namespace wt {

enum class DeviceKind { Host, Strict };

// "host", "strict"; throws std::invalid_argument for anything else.
DeviceKind parse_device_kind(const std::string& name);
const char* device_kind_name(DeviceKind kind);

class DeviceContext {
 public:
  // memory_limit: the budget in bytes (device.memory_limit; 0 = none). seed: the strict device's
  // stream shuffle.
  explicit DeviceContext(size_t memory_limit = 0, DeviceKind kind = DeviceKind::Host,
                         uint64_t seed = 1);
  DeviceContext(const DeviceContext&) = delete;
  DeviceContext& operator=(const DeviceContext&) = delete;

  DeviceKind kind() const { return kind_; }
  CachingAllocator& allocator() { return allocator_; }
  // The device's kernels as host code calls them on `stream`: the host device runs each at once;
  // the strict device enqueues it on the stream (strict_ops.hpp).
  const OpsBackend& ops(int stream = 0);
  // The kernels themselves (what a queued kernel runs; blocking host-side use).
  const OpsBackend& kernels() const { return ops_; }
  // The stream that communication is issued on (after the other streams' events), the way NCCL
  // kernels run on their own stream: higher than any stream a program names.
  static constexpr int kCommStream = 63;
  StreamEvents& events() { return strict_ ? static_cast<StreamEvents&>(*strict_) : host_events_; }
  // The strict device's queues; nullptr on the host device.
  StrictStreams* queues() { return strict_.get(); }

  // Issues device work on `stream`: the host device runs it now, the strict device queues it.
  void launch(int stream, DeviceWork work);
  // Waits until all issued work has run.
  void synchronize() { events().synchronize(); }

 private:
  DeviceKind kind_;
  HostOps ops_;
  ImmediateStreamEvents host_events_;  // before allocator_, which uses them
  std::unique_ptr<StrictStreams> strict_;
  CachingAllocator allocator_;
  std::vector<std::unique_ptr<StrictOps>> stream_ops_;  // strict: by stream, made on first use
};

}  // namespace wt

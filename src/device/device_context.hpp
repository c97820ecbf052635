#pragma once
// One per rank, shared by the rank's jobs: the device's memory (one caching allocator under one
// budget, with an account per job), its kernels (the ops backend) and its streams. A job, the
// executor, the layers and the data path reach the device through it; nothing about the device is
// process-wide.
//
// Kinds (device.kind), each a backend (device_backend.hpp):
//   host:   a CPU core; work on a stream runs when it is issued (host_backend.hpp).
//   strict: the host's kernels under a GPU's rules (strict_backend.hpp): device memory that host
//           code cannot touch except through staged copies, streams that run lazily and in a
//           seeded arbitrary order between synchronisation points, freed memory poisoned with
//           NaN, every access checked for ordering.
//   cuda:   an NVIDIA GPU (cuda/cuda_backend.hpp, CUDA builds): cudaMalloc'd memory, CUDA
//           streams and events, cuBLAS, cuDNN and the portable kernels.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "device/device_backend.hpp"
#include "device/strict_streams.hpp"
#include "mem/caching_allocator.hpp"
#include "ops/conv_algorithm.hpp"
#include "ops/precision.hpp"

namespace wt {

enum class DeviceKind { Host, Strict, Cuda };

// "host", "strict", "cuda"; throws std::invalid_argument for anything else.
DeviceKind parse_device_kind(const std::string& name);
const char* device_kind_name(DeviceKind kind);

// Why a device of `kind` cannot compute in `precision` here, "" when it can: bf16 on a CPU device
// (host, strict) needs oneDNN's native bf16 kernels (AVX512-BF16 or AMX), not its emulation.
std::string precision_unsupported(DeviceKind kind, Precision precision);

struct DeviceOptions {
  DeviceKind kind = DeviceKind::Host;
  // The budget in bytes (device.memory_limit); 0: none on a CPU, the GPU's free memory less a
  // margin on a GPU.
  size_t memory_limit = 0;
  uint64_t strict_seed = 1;               // the strict device's stream shuffle
  int gpu = 0;                            // cuda: the GPU this rank drives
  bool tf32 = false;                      // cuda: let cuBLAS and cuDNN use TF32 tensor cores
  Precision precision = Precision::Fp32;  // the matrix products' inputs (train.precision)
  ConvAlgorithm conv_algorithm = ConvAlgorithm::Auto;  // host, strict (device.conv_algorithm)
};

class DeviceContext {
 public:
  explicit DeviceContext(const DeviceOptions& options);
  explicit DeviceContext(size_t memory_limit = 0, DeviceKind kind = DeviceKind::Host,
                         uint64_t seed = 1);
  // A backend made elsewhere (a benchmark's model of a device: bench/replay_host_cost.cpp);
  // `kind` is what the rank's code is told it runs on.
  DeviceContext(std::unique_ptr<DeviceBackend> backend, DeviceKind kind, size_t memory_limit);
  ~DeviceContext();
  DeviceContext(const DeviceContext&) = delete;
  DeviceContext& operator=(const DeviceContext&) = delete;

  DeviceKind kind() const { return kind_; }
  CachingAllocator& allocator() { return *allocator_; }
  // The device's kernels as host code calls them on `stream`: the host device runs each at once;
  // the strict device enqueues it on the stream (strict_ops.hpp); a GPU launches it.
  const OpsBackend& ops(int stream = 0) { return backend_->ops(stream); }
  // The kernels themselves (what a queued kernel runs; blocking host-side use).
  const OpsBackend& kernels() { return backend_->kernels(); }
  static constexpr int kCommStream = wt::kCommStream;
  DeviceStreams& events() { return backend_->streams(); }
  DeviceBackend& backend() { return *backend_; }
  // The strict device's queues; nullptr on the other devices (tests, planted bugs).
  StrictStreams* queues() { return strict_; }

  // Issues device work on `stream`: the host device runs it now, the strict device queues it.
  void launch(int stream, DeviceWork work) { backend_->launch(stream, std::move(work)); }
  // Waits until all issued work has run.
  void synchronize() { events().synchronize(); }

 private:
  void attach_allocator(size_t memory_limit);

  DeviceKind kind_;
  std::unique_ptr<DeviceBackend> backend_;  // before allocator_, which uses its streams
  StrictStreams* strict_ = nullptr;         // backend_'s queues when it is the strict device
  std::unique_ptr<CachingAllocator> allocator_;
};

}  // namespace wt

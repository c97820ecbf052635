#pragma once
// The CUDA device (device.kind = "cuda", CUDA builds): one NVIDIA GPU per rank. Memory is the
// caching allocator's segments from cudaMalloc (never managed memory), streams are CUDA streams
// created with the program's priorities, stream events are cudaEvents, kernels are CudaOps
// (cuBLAS, cuDNN and the portable kernels, ops/cuda/) bound to each stream, tensor copies and
// fills are cudaMemcpyAsync and kernels on the issuing stream. The program's Record and Wait are
// cudaEventRecord and cudaStreamWaitEvent, its transfers NCCL on the communicator's stream after
// an event from the issuing stream, or MPI staged through pinned host memory (cuda_program_events).
// No CUDA header leaks out of this file.
#include <cstddef>
#include <memory>

#include "device/device_backend.hpp"

namespace wt::cuda {

// The backend of GPU `gpu` (made current on this thread). *memory_limit: the budget; 0 becomes the
// GPU's free memory less a margin (kMemoryMargin or 5%, the larger), for the CUDA context's and
// the libraries' own allocations.
std::unique_ptr<DeviceBackend> make_cuda_backend(int gpu, bool tf32, Precision precision,
                                                 size_t* memory_limit);

constexpr size_t kMemoryMargin = size_t(512) << 20;

}  // namespace wt::cuda

#include <cuda_runtime.h>

#include "device/cuda/gpu_probe.hpp"

namespace wt::cuda {

GpuProbe probe_gpus() {
  GpuProbe probe;
  const cudaError_t status = cudaGetDeviceCount(&probe.count);
  if (status != cudaSuccess) {
    probe.count = 0;
    probe.why_none = cudaGetErrorString(status);
    return probe;
  }
  if (probe.count == 0) {
    probe.why_none = "the CUDA runtime reports 0 devices";
    return probe;
  }
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess) probe.first_name = prop.name;
  return probe;
}

}  // namespace wt::cuda

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

std::string gpu_uuid(int device) {
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) return "";
  static const char* const kHex = "0123456789abcdef";
  std::string text = "GPU-";
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) text += '-';
    const auto byte = static_cast<unsigned char>(prop.uuid.bytes[i]);
    text += kHex[byte >> 4];
    text += kHex[byte & 15];
  }
  return text;
}

}  // namespace wt::cuda

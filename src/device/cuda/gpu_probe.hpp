#pragma once
// What a rank can see of GPUs (CUDA builds): the count and the first one's name, or why there are
// none (the CUDA runtime's own message). Asked once, before a run, to refuse device.kind = "cuda"
// with the real reason.
#include <string>

namespace wt::cuda {

struct GpuProbe {
  int count = 0;
  std::string first_name;  // device 0's name, when count > 0
  std::string why_none;    // cudaGetDeviceCount's error, when count == 0
};

GpuProbe probe_gpus();

// Device `device`'s UUID as nvidia-smi prints it ("GPU-8c4e...-..."), or "" if it cannot be read.
std::string gpu_uuid(int device);

}  // namespace wt::cuda

#include "exec/step_readback.hpp"

#include <new>
#include <stdexcept>

namespace wt {

int64_t StepReadback::reserve(int64_t floats, const std::string& what) {
  if (device_.defined())
    throw std::logic_error("StepReadback: '" + what + "' reserved after the first device use");
  const int64_t offset = floats_;
  floats_ += floats;
  what_ += (what_.empty() ? "" : " and ") + what;
  return offset;
}

float* StepReadback::device_ptr(int64_t offset) { return tensor().device_ptr() + offset; }

const Tensor& StepReadback::tensor() {
  if (!device_.defined()) {
    // Zeroed once, synchronously: every stream then writes its region, ordered after it.
    device_ = Tensor::zeros({std::max<int64_t>(1, floats_)}, memory_);
    device_.set_label(what_);
    // The graphed steps' pinned buffers now, outside any capture (cudaMallocHost in one is unsafe).
    const size_t bytes = sizeof(float) * size_t(device_.numel());
    DeviceStreams& device = memory_.device();
    for (float*& pinned : pinned_) {
      pinned = static_cast<float*>(device.allocate_pinned(bytes));
      if (!pinned) throw std::bad_alloc();
      device.name_memory(pinned, bytes, "the step's results in pinned host memory");
    }
  }
  return device_;
}

StepReadback::~StepReadback() {
  for (float* pinned : pinned_)
    if (pinned) memory_.device().free_pinned(pinned);
}

const float* StepReadback::host(int64_t offset, int64_t step) {
  if (step < 0 || staged_step_ != step) {
    int set = -1;
    for (int p = 0; p < 2; ++p)
      if (step >= 0 && pinned_step_[p] == step) set = p;
    if (set >= 0) {
      const size_t bytes = sizeof(float) * size_t(tensor().numel());
      memory_.device().host_reads_pinned(pinned_[set], bytes, "reading the step's results");
      staged_.assign(pinned_[set], pinned_[set] + tensor().numel());
      pinned_step_[set] = -1;
    } else {
      staged_ = tensor().to_host();  // the one wait for the device
    }
    staged_step_ = step;
  }
  return staged_.data() + offset;
}

void StepReadback::copy_async(int64_t step, int set) {
  const Tensor& results = tensor();
  const size_t bytes = sizeof(float) * size_t(results.numel());
  memory_.device().copy_to_pinned_async(0, pinned_[set], results.device_ptr(), bytes,
                                        "the copy of the step's results to the host");
  pinned_step_[set] = step;
}

}  // namespace wt

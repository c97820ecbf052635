#include "exec/step_readback.hpp"

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
  }
  return device_;
}

const float* StepReadback::host(int64_t offset, int64_t step) {
  if (step < 0 || staged_step_ != step) {
    staged_ = tensor().to_host();  // the one wait for the device
    staged_step_ = step;
  }
  return staged_.data() + offset;
}

}  // namespace wt

#include "ops/per_step_values.hpp"

#include <cstring>
#include <new>
#include <stdexcept>
#include <string>

namespace wt {

PerStepValues::~PerStepValues() {
  for (auto& [key, record] : records_)
    for (float* pinned : record.pinned)
      if (pinned) device_.events().free_pinned(pinned);
}

const float* PerStepValues::issue(int stage, const float* values, int count, int stream) {
  if (count > kMaxValues) throw std::logic_error("per-step values: too many");
  Record& r = records_[{stage, calls_[stage]++}];
  if (!r.pinned[0]) {  // the first step's (eager), so a captured step allocates nothing
    for (float*& pinned : r.pinned) {
      pinned = static_cast<float*>(device_.events().allocate_pinned(kMaxValues * sizeof(float)));
      if (!pinned) throw std::bad_alloc();
    }
    r.device = Tensor::empty({kMaxValues}, device_.allocator(), stream);
    r.device.set_label("the optimizer's per-step values of stage " + std::to_string(stage));
  }
  std::memcpy(r.pinned[set_], values, size_t(count) * sizeof(float));
  device_.events().copy_from_pinned_async(stream, r.device.device_ptr(), r.pinned[set_],
                                          size_t(count) * sizeof(float),
                                          "the optimizer's per-step values");
  return r.device.device_ptr();
}

}  // namespace wt

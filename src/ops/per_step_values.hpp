#pragma once
// The optimizer's per-step scalars (SGD's learning rate; AdamW's decay, step size and bias
// correction) in device memory, for whole-step graphs (device.cuda_graphs): a captured update
// kernel would replay the values it was captured with, so instead it reads them through a pointer
// (ops::SgdUpdate::per_step), and each step the host writes them into a fixed pinned buffer whose
// copy to the device the step issues on the update's stream, as it issues the labels' (a graph's
// copy node reads the buffer again at each replay). One record per stage and per update of that
// stage within a step, so the same record serves the same update every step. Each record has two
// pinned buffers, one per set of a step's pinned inputs (device_backend.hpp's two graphs): the host
// writes one while the device may still copy from the other.
#include <map>
#include <utility>
#include <vector>

#include "device/device_context.hpp"
#include "tensor/tensor.hpp"

namespace wt {

class PerStepValues {
 public:
  static constexpr int kMaxValues = 4;
  explicit PerStepValues(DeviceContext& device) : device_(device) {}
  ~PerStepValues();
  PerStepValues(const PerStepValues&) = delete;
  PerStepValues& operator=(const PerStepValues&) = delete;

  // A new step, whose values go through pinned set `set`: each stage's updates take their
  // records from the first again.
  void new_step(int set) {
    calls_.clear();
    set_ = set & 1;
  }
  // Issues the copy of values[0, count) into this update's device record on `stream` and returns
  // the record (device memory). The copy from this set two steps ago has run: the executor reads
  // a step's results back before it issues the step after next.
  const float* issue(int stage, const float* values, int count, int stream);

 private:
  struct Record {
    float* pinned[2] = {nullptr, nullptr};
    Tensor device;
  };
  DeviceContext& device_;
  std::map<std::pair<int, int>, Record> records_;  // (stage, update within the step)
  std::map<int, int> calls_;                       // this step's updates so far, per stage
  int set_ = 0;
};

}  // namespace wt

#pragma once
// What the host learns from the device once per step (the loss and accuracy totals, the
// non-finite gradient counts) lives in one device tensor and comes back in one staged copy, as a
// GPU trainer's results come back in one pinned device-to-host copy: the step's only wait for the
// device. Each reader reserves its region before the first step; the first reader of a step's
// results makes the copy and later readers of the same step share it. A step captured or replayed
// as a graph copies its results out as its last work instead (copy_async), into one of two pinned
// buffers, so the host can read a step's results after it has issued the next step.
#include <cstdint>
#include <string>
#include <vector>

#include "tensor/tensor.hpp"

namespace wt {

class StepReadback {
 public:
  explicit StepReadback(CachingAllocator& memory) : memory_(memory) {}
  ~StepReadback();
  StepReadback(const StepReadback&) = delete;
  StepReadback& operator=(const StepReadback&) = delete;

  // Reserves `floats` floats for `what` (named in the device's messages); returns their offset.
  // Only before the first device_ptr().
  int64_t reserve(int64_t floats, const std::string& what);
  // Device memory at `offset`: kernels write the results there. Allocates on first use.
  float* device_ptr(int64_t offset);
  // The results of `step` in host memory, from `offset`: one staged copy per step. A negative
  // step (an evaluation) always copies afresh.
  // Read from `step`'s pinned buffer where copy_async made its copy: the caller has waited for
  // an event recorded after it.
  const float* host(int64_t offset, int64_t step);
  // Issues the copy of `step`'s results into pinned buffer `set` (0 or 1) on stream 0, after the
  // work issued there so far (the step's join of every stream).
  void copy_async(int64_t step, int set);
  // The device tensor itself (a test's deliberate unsynchronised read).
  const Tensor& tensor();

 private:
  CachingAllocator& memory_;
  int64_t floats_ = 0;
  std::string what_;
  Tensor device_;
  std::vector<float> staged_;
  int64_t staged_step_ = -1;  // whose results staged_ holds (-1: none, or an evaluation's)
  float* pinned_[2] = {nullptr, nullptr};
  int64_t pinned_step_[2] = {-1, -1};  // whose results each pinned buffer receives
};

}  // namespace wt

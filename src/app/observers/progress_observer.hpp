#pragma once
// Rank 0's progress line, at most every run.progress_seconds: epoch, step, the training loss of
// its own shard since the last line, learning rate, samples/s and the time left.
#include <chrono>

#include "app/step_observer.hpp"

namespace wt {

class ProgressObserver : public StepObserver {
 public:
  ProgressObserver() : since_(std::chrono::steady_clock::now()) {}
  void after_step(Job& job, const StepRecord& record) override;
  bool may_communicate_after(const Job&, int64_t) const override { return false; }

 private:
  std::chrono::steady_clock::time_point since_;
  StepStats window_;
  int64_t steps_ = 0;
};

}  // namespace wt

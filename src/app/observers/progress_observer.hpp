#pragma once
// Rank 0's progress line, at most every run.progress_seconds: epoch, step, the training loss of
// its own shard since the last line, learning rate, samples/s and the time left. Where rank 0
// computes no loss (a pipeline's first stage: the loss is the last stage's), the line shows the
// job-wide loss of metrics.csv's latest row and its step instead.
#include <chrono>
#include <string>

#include "app/observers/metrics_observer.hpp"
#include "app/step_observer.hpp"

namespace wt {

class ProgressObserver : public StepObserver {
 public:
  explicit ProgressObserver(const MetricsObserver& metrics)
      : metrics_(metrics), since_(std::chrono::steady_clock::now()) {}
  void after_step(Job& job, const StepRecord& record) override;
  bool may_communicate_after(const Job&, int64_t) const override { return false; }

 private:
  std::string loss_text() const;
  const MetricsObserver& metrics_;
  std::chrono::steady_clock::time_point since_;
  StepStats window_;
  int64_t steps_ = 0;
};

}  // namespace wt

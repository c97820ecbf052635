#pragma once
// At each epoch's end (train.eval_every_epoch), the test split through the job's one evaluation
// path: a log line (bits per token for sequence models) and an eval row in metrics.csv.
#include <chrono>

#include "app/observers/metrics_observer.hpp"
#include "app/step_observer.hpp"

namespace wt {

class EvaluationObserver : public StepObserver {
 public:
  EvaluationObserver(std::chrono::steady_clock::time_point run_start, MetricsObserver& metrics)
      : run_start_(run_start), metrics_(metrics) {}
  void after_step(Job& job, const StepRecord& record) override;
  bool may_communicate_after(const Job& job, int64_t step) const override;  // an evaluation
  // The last evaluation's accuracy and loss; accuracy -1 when none ran.
  double accuracy() const { return accuracy_; }
  double loss() const { return loss_; }

 private:
  std::chrono::steady_clock::time_point run_start_;
  MetricsObserver& metrics_;
  double accuracy_ = -1, loss_ = 0;
};

}  // namespace wt

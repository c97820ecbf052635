#pragma once
// The run's outcome: the median step rate (app/step_time_sample.hpp), the peak resident set over
// the ranks and each rank's device memory peaks (a collective), summary.json and the final line:
// "done" with the test accuracy (and no rate when this start ran no step: the checkpoint it
// resumed already completed the run), or "stopped ... with a checkpoint" when a stop ended it.
#include <chrono>
#include <vector>

#include "app/observers/evaluation_observer.hpp"
#include "app/step_observer.hpp"
#include "app/step_time_sample.hpp"
#include "app/trainer.hpp"

namespace wt {

class SummaryObserver : public StepObserver {
 public:
  SummaryObserver(Job& job, std::chrono::steady_clock::time_point run_start,
                  const EvaluationObserver& evaluation);
  void after_step(Job& job, const StepRecord& record) override;
  bool may_communicate_after(const Job&, int64_t) const override { return false; }
  void finish(Job& job) override;
  const TrainResult& result() const { return result_; }

 private:
  void write_summary(Job& job, double peak_rss_mb, const std::vector<double>& rank_peak_device_mb,
                     const std::vector<double>& rank_peak_in_use_mb) const;

  std::chrono::steady_clock::time_point run_start_;
  const EvaluationObserver& evaluation_;
  StepTimeSample step_times_;
  StepTimeSample issue_times_;  // the host's part of each step (Executor::last_issue_seconds)
  int64_t most_synchronizations_ = -1;  // in one step, the strict device only
  int64_t steps_run_ = 0;               // in this start: none when a resume already completes it
  TrainResult result_;
};

}  // namespace wt

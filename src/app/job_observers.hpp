#pragma once
// A job's observers around every step, in their order: the caller's step hook, the trace (which
// closes the step first), metrics, progress (which may show the metrics' row of the same step),
// evaluation, checkpoints and stops, then the summary
// (the end checkpoint comes before the summary and the final line). One bundle per job.
#include <chrono>
#include <functional>
#include <memory>
#include <vector>

#include "app/observers/checkpoint_observer.hpp"
#include "app/observers/evaluation_observer.hpp"
#include "app/observers/metrics_observer.hpp"
#include "app/observers/progress_observer.hpp"
#include "app/observers/summary_observer.hpp"
#include "app/observers/trace_observer.hpp"
#include "app/trainer.hpp"

namespace wt {

class JobObservers {
 public:
  // shared_control: the stop decisions of the jobs co-located with this one (nullptr: its own).
  JobObservers(Job& job, const RunConfig& config, const TrainOptions& options,
               std::chrono::steady_clock::time_point t_start, RunControl* shared_control = nullptr);
  std::vector<StepObserver*> list();
  TrainResult result() { return summary_.result(); }

 private:
  // The caller's hook before every step (the stall detector's step number).
  class StepCallback : public StepObserver {
   public:
    explicit StepCallback(std::function<void(int64_t)> on_step) : on_step_(std::move(on_step)) {}
    void before_step(Job&, int64_t step) override {
      if (on_step_) on_step_(step);
    }
    void after_step(Job&, const StepRecord&) override {}
    bool may_communicate_after(const Job&, int64_t) const override { return false; }

   private:
    std::function<void(int64_t)> on_step_;
  };
  StepCallback callback_;
  std::unique_ptr<TraceObserver> trace_;
  MetricsObserver metrics_;
  ProgressObserver progress_;  // reads the metrics' latest job-wide loss
  EvaluationObserver evaluation_;
  std::unique_ptr<CheckpointObserver> checkpoints_;
  SummaryObserver summary_;
};

}  // namespace wt

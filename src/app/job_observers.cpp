#include "app/job_observers.hpp"

#include <initializer_list>

#include "job/job.hpp"

namespace wt {

JobObservers::JobObservers(Job& job, const RunConfig& config, const TrainOptions& options,
                           std::chrono::steady_clock::time_point t_start,
                           RunControl* shared_control)
    : callback_(options.on_step),
      trace_(config.trace.enabled ? std::make_unique<TraceObserver>(job) : nullptr),
      metrics_(t_start, config.failure),
      progress_(metrics_),
      evaluation_(t_start, metrics_),
      checkpoints_(shared_control
                       ? std::make_unique<CheckpointObserver>(job, *shared_control)
                       : std::make_unique<CheckpointObserver>(job, options.walltime_s, t_start)),
      summary_(job, t_start, evaluation_) {}

std::vector<StepObserver*> JobObservers::list() {
  std::vector<StepObserver*> observers{&callback_};
  if (trace_) observers.push_back(trace_.get());
  for (StepObserver* o : std::initializer_list<StepObserver*>{&metrics_, &progress_, &evaluation_,
                                                              checkpoints_.get(), &summary_})
    observers.push_back(o);
  return observers;
}

}  // namespace wt

#include "app/training_loop.hpp"

#include <chrono>

#include "device/device_context.hpp"
#include "job/job.hpp"

namespace wt {

void TrainingLoop::add_job(Job& job, std::vector<StepObserver*> observers) {
  entries_.push_back({&job, std::move(observers), job.start_step(), false});
}

void TrainingLoop::step_once(Entry& entry) {
  Job& job = *entry.job;
  const int64_t step = entry.next_step;
  for (StepObserver* o : entry.observers) o->before_step(job, step);
  const auto t0 = std::chrono::steady_clock::now();
  const StrictStreams* strict = job.device().queues();
  const uint64_t synchronizations = strict ? strict->synchronizations() : 0;
  StepRecord record;
  record.step = step;
  record.stats = job.run_step(step);
  record.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (strict)
    record.device_synchronizations = int64_t(strict->synchronizations() - synchronizations);
  for (StepObserver* o : entry.observers) o->after_step(job, record);
  entry.next_step = step + 1;
}

void TrainingLoop::finish(Entry& entry) {
  entry.job->source().quiesce();  // no background read outlives the steps
  for (StepObserver* o : entry.observers) o->finish(*entry.job);
  entry.finished = true;
}

void TrainingLoop::run() {
  for (bool stepped = true; stepped;) {
    stepped = false;
    for (Entry& entry : entries_) {
      if (entry.finished) continue;
      if (entry.next_step < entry.job->total_steps()) {
        step_once(entry);
        stepped = true;
      }
      if (entry.next_step >= entry.job->total_steps()) finish(entry);
    }
  }
}

}  // namespace wt

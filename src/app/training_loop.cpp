#include "app/training_loop.hpp"

#include <chrono>
#include <stdexcept>
#include <utility>

#include "app/issue_in_turn.hpp"
#include "app/job_failure.hpp"
#include "device/device_context.hpp"
#include "exec/executor.hpp"
#include "job/job.hpp"
#include "mem/caching_allocator.hpp"

namespace wt {

void TrainingLoop::add_job(Job& job, std::vector<StepObserver*> observers) {
  Entry entry;
  entry.job = &job;
  entry.observers = std::move(observers);
  entry.next_step = job.start_step();
  entries_.push_back(std::move(entry));
}

void TrainingLoop::step_once(Entry& entry) {
  Job& job = *entry.job;
  const FailingJobScope failing(job);
  const int64_t step = entry.next_step;
  for (StepObserver* o : entry.observers) o->before_step(job, step);
  Launched launched;
  launched.step = step;
  launched.pass = pass_;
  launched.began = Clock::now();
  launched.synchronizations = job.device().backend().synchronizations();
  entry.next_step = step + 1;
  if (driver_) {
    bool quiet_end = true;
    for (const StepObserver* o : entry.observers)
      quiet_end = quiet_end && !o->may_communicate_after(job, step);
    StepRecord record;
    record.step = step;
    record.pass = pass_;
    record.stats = driver_->run_step(job, step, quiet_end);
    record.lr = job.learning_rate_now();
    finish_record(entry, launched, record);
    return;
  }
  job.launch_step(step);
  launched.lr = job.learning_rate_now();
  if (entry.running) collect(entry, *std::exchange(entry.running, std::nullopt));
  if (may_leave_running(entry, step))
    entry.running = launched;
  else
    collect(entry, launched);
}

bool TrainingLoop::may_leave_running(const Entry& entry, int64_t step) const {
  Job& job = *entry.job;
  if (!job.may_run_on() || step + 1 >= job.total_steps()) return false;
  if (job.device().allocator().cross_stream_reuse() == CrossStreamReuse::AfterSync) return false;
  for (const StepObserver* o : entry.observers)
    if (o->must_finish_before_next(job, step)) return false;
  return true;
}

void TrainingLoop::collect(Entry& entry, const Launched& launched) {
  StepRecord record;
  record.step = launched.step;
  record.pass = launched.pass;  // not the collecting pass's: each step counts in RunControl
  record.lr = launched.lr;
  record.stats = entry.job->collect_step(launched.step);
  finish_record(entry, launched, record);
}

// A step's time runs from its launch, or from the end of the last step's collection (its
// observers included) where that came later: a step left running overlaps the next one's issue.
void TrainingLoop::finish_record(Entry& entry, const Launched& launched, StepRecord& record) {
  Job& job = *entry.job;
  const DeviceBackend& device = job.device().backend();
  const Clock::time_point now = Clock::now();
  record.seconds =
      std::chrono::duration<double>(now - std::max(launched.began, entry.last_collected)).count();
  if (device.counts_synchronizations())
    record.device_synchronizations =
        int64_t(device.synchronizations() -
                std::max(launched.synchronizations, entry.synchronizations_at_collect));
  for (StepObserver* o : entry.observers) o->after_step(job, record);
  settle_memory(job.device());
  // The observers' own time and synchronisations (a checkpoint's) count for no step.
  entry.last_collected = Clock::now();
  entry.synchronizations_at_collect = device.synchronizations();
}

// A step ends with the host waiting for the device (its totals' readback): under Waterwave's
// allocator every stream's freed blocks are then safe for all (a synchronisation it gets free).
void TrainingLoop::settle_memory(DeviceContext& device) {
  if (device.allocator().cross_stream_reuse() == CrossStreamReuse::AfterSync)
    device.allocator().sync_and_coalesce();
}

void TrainingLoop::finish(Entry& entry) {
  const FailingJobScope failing(*entry.job);
  // The last step is never left running, nor one a stop follows (must_finish_before_next): this
  // only keeps the promise that the observers' finish sees every step.
  if (entry.running) collect(entry, *std::exchange(entry.running, std::nullopt));
  entry.job->source().quiesce();  // no background read outlives the steps
  for (StepObserver* o : entry.observers) o->finish(*entry.job);
  entry.finished = true;
}

bool TrainingLoop::together(const Entry& entry) const {
  if (pairs_) return pairs_->profiled(*entry.job);
  return interleaved_;
}

void TrainingLoop::step_alone(Entry& entry) {
  if (!pairs_ || entry.next_step == entry.job->start_step()) return step_once(entry);
  pairs_->profile(*entry.job, [&] { step_once(entry); });
}

void TrainingLoop::step_together(const std::vector<Entry*>& round) {
  for (Entry* entry : round) {
    const FailingJobScope failing(*entry->job);
    for (StepObserver* o : entry->observers) o->before_step(*entry->job, entry->next_step);
  }
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<Job*> jobs;
  for (Entry* entry : round) {
    const FailingJobScope failing(*entry->job);
    entry->job->begin_step(entry->next_step);
    jobs.push_back(entry->job);
  }
  if (pairs_) {
    pairs_->issue(jobs);
  } else {
    std::vector<size_t> whole_steps;
    for (Job* job : jobs) whole_steps.push_back(job->executor().step_instructions());
    issue_in_turn(jobs, whole_steps, false, "(no job can issue or progress)");
  }
  // The device runs what the jobs queued, each job's transfers progressing, before any job reads
  // its step's results (each finish_step then finds nothing left to run).
  jobs.front()->device().backend().drain([&] {
    bool any = false;
    for (Job* job : jobs) any = job->executor().poll_communication() || any;
    return any;
  });
  for (Entry* entry : round) {
    const FailingJobScope failing(*entry->job);
    StepRecord record;
    record.step = entry->next_step;
    record.pass = pass_;
    record.stats = entry->job->finish_step(entry->next_step);
    record.lr = entry->job->learning_rate_now();
    record.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (StepObserver* o : entry->observers) o->after_step(*entry->job, record);
    entry->next_step++;
  }
  settle_memory(jobs.front()->device());
}

void TrainingLoop::run() {
  for (bool stepped = true; stepped; ++pass_) {
    stepped = false;
    std::vector<Entry*> round;
    for (Entry& entry : entries_) {
      if (entry.finished || entry.next_step >= entry.job->total_steps()) continue;
      if (together(entry))
        round.push_back(&entry);
      else
        step_alone(entry);
      stepped = true;
    }
    if (!round.empty()) step_together(round);
    for (Entry& entry : entries_)
      if (!entry.finished && entry.next_step >= entry.job->total_steps()) finish(entry);
  }
}

}  // namespace wt

#include "app/training_loop.hpp"

#include <chrono>
#include <stdexcept>

#include "device/device_context.hpp"
#include "exec/executor.hpp"
#include "job/job.hpp"
#include "mem/caching_allocator.hpp"

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

void TrainingLoop::step_together(const std::vector<Entry*>& round) {
  for (Entry* entry : round)
    for (StepObserver* o : entry->observers) o->before_step(*entry->job, entry->next_step);
  const auto t0 = std::chrono::steady_clock::now();
  for (Entry* entry : round) entry->job->begin_step(entry->next_step);
  for (bool issued = false; !issued;) {
    issued = true;
    bool progressed = false;
    for (Entry* entry : round) {
      Executor& executor = entry->job->executor();
      if (executor.step_issued()) continue;
      issued = false;
      CachingAllocator::JobScope account(entry->job->device().allocator(), entry->job->id());
      progressed = executor.issue_ready(true) || progressed;
    }
    if (issued || progressed) continue;
    // Every job waits: let the device run and communication progress, for any of them.
    for (Entry* entry : round) progressed = entry->job->executor().try_progress() || progressed;
    if (!progressed)
      throw std::logic_error("co-located jobs deadlocked: no job can issue or progress");
  }
  // The device runs what the jobs queued, each job's transfers progressing, before any job reads
  // its step's results (each finish_step then finds nothing left to run).
  if (StrictStreams* queues = round.front()->job->device().queues())
    queues->drain([&] {
      bool any = false;
      for (Entry* entry : round) any = entry->job->executor().poll_communication() || any;
      return any;
    });
  for (Entry* entry : round) {
    StepRecord record;
    record.step = entry->next_step;
    record.stats = entry->job->finish_step(entry->next_step);
    record.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (StepObserver* o : entry->observers) o->after_step(*entry->job, record);
    entry->next_step++;
  }
}

void TrainingLoop::run() {
  for (bool stepped = true; stepped;) {
    stepped = false;
    std::vector<Entry*> round;
    for (Entry& entry : entries_) {
      if (entry.finished) continue;
      if (entry.next_step < entry.job->total_steps()) {
        if (interleaved_)
          round.push_back(&entry);
        else
          step_once(entry);
        stepped = true;
      }
      if (!interleaved_ && entry.next_step >= entry.job->total_steps()) finish(entry);
    }
    if (!interleaved_) continue;
    if (!round.empty()) step_together(round);
    for (Entry& entry : entries_)
      if (!entry.finished && entry.next_step >= entry.job->total_steps()) finish(entry);
  }
}

}  // namespace wt

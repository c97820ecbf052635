#include "app/observers/checkpoint_observer.hpp"

#include <stdexcept>
#include <string>

#include "job/job.hpp"

namespace wt {

CheckpointObserver::CheckpointObserver(Job& job, double walltime_s,
                                       std::chrono::steady_clock::time_point run_start)
    : own_(std::make_unique<RunControl>(job.config(), walltime_s, job.comm(), run_start)),
      control_(*own_),
      every_steps_(job.config().checkpoint.every_steps),
      last_checkpoint_(job.start_step() > 0 ? job.start_step() : -1) {}

CheckpointObserver::CheckpointObserver(Job& job, RunControl& shared)
    : control_(shared),
      every_steps_(job.config().checkpoint.every_steps),
      last_checkpoint_(job.start_step() > 0 ? job.start_step() : -1) {}

bool CheckpointObserver::may_communicate_after(const Job&, int64_t step) const {
  return (every_steps_ > 0 && (step + 1) % every_steps_ == 0) || control_.syncs_next();
}

void CheckpointObserver::after_step(Job& job, const StepRecord& record) {
  const int64_t done = record.step + 1;
  RunAction action = control_.after_step(record.seconds, record.pass);
  if (every_steps_ > 0 && done % every_steps_ == 0) action.checkpoint = true;
  if (action.checkpoint) {
    // The weights saved are this step's: no later one may be running (must_finish_before_next).
    if (job.executor().steps_in_flight())
      throw std::logic_error("checkpoint after step " + std::to_string(done) +
                             " while a later step still runs");
    job.source().quiesce();
    control_.checkpoint_written(job.checkpointer().save(done));
    last_checkpoint_ = done;
  }
  if (!action.stop) return;
  if (action.walltime)
    job.log().result("wavetrain: stopping at step %lld: the wall time runs out; resubmit to resume",
                     (long long)done);
  else
    job.log().result("wavetrain: stopping at step %lld on signal %d; resubmit to resume",
                     (long long)done, action.signal);
  job.stop_after(done);
}

void CheckpointObserver::finish(Job& job) {
  const int64_t total = job.total_steps();
  if (!job.stopped_early() && last_checkpoint_ != total && total > job.start_step())
    job.checkpointer().save(total);  // the end of the run is always checkpointed
}

}  // namespace wt

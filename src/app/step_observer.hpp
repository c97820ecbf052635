#pragma once
// What the training loop tells the code around a job's steps: progress lines, metrics,
// evaluation, checkpoints and stop handling, traces and the run summary are each an observer
// (app/observers/), not code inline in the loop.
#include <cstdint>

#include "exec/executor.hpp"

namespace wt {

class Job;

struct StepRecord {
  int64_t step = 0;    // 0-based index of the step just run
  StepStats stats;     // this rank's; empty when the non-finite guard skipped the step
  double seconds = 0;  // wall time of the step
  double lr = 0;       // its learning rate (the job's may be the next step's by now)
  // The strict device: how many times the host waited for the device during the step (a GPU
  // host's blocking copies and synchronisations); -1 on other devices.
  int64_t device_synchronizations = -1;
  // The training loop's pass that ran it: co-located jobs stepped in one pass share one stop
  // decision (RunControl); -1 outside a training loop.
  int64_t pass = -1;
};

class StepObserver {
 public:
  virtual ~StepObserver() = default;
  virtual void before_step(Job& job, int64_t step) {
    (void)job;
    (void)step;
  }
  virtual void after_step(Job& job, const StepRecord& record) = 0;
  // Whether after_step(step) may enter a collective of the job's communicator (a metrics row, a
  // stop agreement, a checkpoint, an evaluation), asked before the step: a driver lets this
  // rank's own work run on past a step's end only where none does, so no peer waits for it there
  // (app/background/multiplexer.cpp). An observer that cannot tell says it may.
  virtual bool may_communicate_after(const Job& job, int64_t step) const {
    (void)job;
    (void)step;
    return true;
  }
  // Whether `step` must be finished, its results read and its after_step run, before step + 1 is
  // issued (device.overlap_steps leaves a step running otherwise, app/training_loop.hpp): an
  // observer that communicates after it or needs the device idle then, or whose before_step(step +
  // 1) changes how that step runs. Asked after `step` is launched.
  virtual bool must_finish_before_next(const Job& job, int64_t step) const {
    return may_communicate_after(job, step);
  }
  // After the job's last step, or the step a stop ended it at.
  virtual void finish(Job& job) { (void)job; }
};

}  // namespace wt

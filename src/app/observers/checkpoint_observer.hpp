#pragma once
// Checkpoints and stopping: after each step the run controller (app/run_control.hpp: the deck's
// checkpoint interval, SIGTERM/SIGUSR1, --walltime) says whether to checkpoint and whether to
// stop; a stop ends the job after this step, resumable (exit 75). The end of a run that was not
// stopped is always checkpointed.
#include <chrono>
#include <memory>

#include "app/run_control.hpp"
#include "app/step_observer.hpp"

namespace wt {

class CheckpointObserver : public StepObserver {
 public:
  // walltime_s: --walltime (0 = none), counted from run_start. Collective (every rank).
  CheckpointObserver(Job& job, double walltime_s, std::chrono::steady_clock::time_point run_start);
  // A job co-located with others: `shared` decides for all of them, once per loop pass.
  CheckpointObserver(Job& job, RunControl& shared);
  void after_step(Job& job, const StepRecord& record) override;
  // A checkpoint every_steps, or the stop decision's agreement (RunControl::syncs_next).
  bool may_communicate_after(const Job& job, int64_t step) const override;
  void finish(Job& job) override;

 private:
  std::unique_ptr<RunControl> own_;
  RunControl& control_;
  int64_t every_steps_;
  int64_t last_checkpoint_;
};

}  // namespace wt

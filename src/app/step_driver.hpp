#pragma once
// Runs a job's step in place of Job::run_step, for the training loop (app/training_loop.hpp): a
// driver that does more inside the step, like DeepPool's multiplexing of a background job into the
// foreground's idle time (app/background/multiplexer.hpp).
#include <cstdint>

#include "exec/executor.hpp"

namespace wt {

class Job;

class StepDriver {
 public:
  virtual ~StepDriver() = default;
  // quiet_end: no observer of the job enters a collective after this step
  // (StepObserver::may_communicate_after), so this rank's own work may run on past its end.
  virtual StepStats run_step(Job& job, int64_t step, bool quiet_end) = 0;
};

}  // namespace wt

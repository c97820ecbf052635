#pragma once
// Decides, the same way on every rank, when to write a checkpoint and when to stop early:
// every T seconds and before --walltime runs out (rank 0's clock decides), and on
// SIGTERM/SIGUSR1/SIGINT (whichever rank got it). The time- and
// signal-driven decisions need one tiny allreduce; it runs every `sync interval` steps, an interval
// rank 0 picks from the measured step time so that it costs ~nothing however short steps are, and
// broadcasts inside that same allreduce.
#include <chrono>
#include <cstdint>

#include "comm/communicator.hpp"
#include "deck/run_config.hpp"

namespace wt {

// Blocks SIGTERM/SIGUSR1/SIGINT in this thread and every thread it starts later (call first in
// main).
void install_stop_signal_handlers();
// The stop signal received so far (0 = none); collects a pending one. Main thread only.
int stop_signal_received();

struct RunAction {
  bool checkpoint = false;
  bool stop = false;  // stop after the checkpoint, resumable (exit status 75)
  int signal = 0;     // the signal that caused the stop, if any
  bool walltime = false;
};

class RunControl {
 public:
  // walltime_s: the job's wall-time budget from --walltime (0 = none), counted from `start`.
  RunControl(const RunConfig& config, double walltime_s, Communicator& comm,
             std::chrono::steady_clock::time_point start);

  // Called after every completed step, collectively (checkpoint.every_steps, known everywhere, is
  // the caller's: app/observers/checkpoint_observer.cpp). Jobs co-located on a rank share one
  // controller: the first of a loop's `pass` (>= 0) to finish decides for all of them (one signal,
  // one sync interval), so they all stop after the same pass, each at its own step; each job's own
  // checkpoint.every_steps is its observer's.
  RunAction after_step(double step_seconds, int64_t pass = -1);
  // Whether the next after_step may agree with the other ranks (an allreduce); the first of a
  // shared pass's jobs may, the others reuse its decision.
  bool syncs_next() const { return decisions_ + 1 >= next_sync_; }
  // Tells the controller how long the last checkpoint write took (for the walltime margin).
  void checkpoint_written(double seconds);

 private:
  double elapsed() const;
  double next_sync_interval(double step_seconds) const;  // rank 0's choice, in steps
  const RunConfig& config_;
  double walltime_s_;
  Communicator& comm_;
  std::chrono::steady_clock::time_point start_;
  double last_checkpoint_time_ = 0;  // elapsed() at the last checkpoint
  double slowest_step_ = 0;
  double seconds_since_sync_ = 0;  // training time since the last control allreduce
  int64_t steps_since_sync_ = 0;
  double checkpoint_seconds_ = 0;
  int64_t sync_interval_ = 1;
  int64_t decisions_ = 0;  // decisions taken (steps, or passes when shared)
  int64_t next_sync_ = 1;  // the decision that syncs next
  int64_t last_pass_ = -1;
  RunAction last_action_;  // the last pass's decision, for the other jobs of that pass
};

}  // namespace wt

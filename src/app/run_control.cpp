#include "app/run_control.hpp"

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <csignal>
#include <ctime>

namespace wt {

namespace {

int g_stop_signal = 0;  // main thread only

sigset_t stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGUSR1);
  sigaddset(&set, SIGINT);  // Ctrl-C of a rank run by hand: a checkpoint, like the scheduler's
  return set;
}

// Aim for one control allreduce per this many seconds of training: a stop signal waits at most
// about this long (times any slowdown since the interval was chosen) before the ranks agree.
constexpr double kSyncPeriod = 0.25;
constexpr double kMaxSyncInterval = 1000;

}  // namespace

// The stop signals are blocked, not handled: every thread created afterwards (MPI's, oneDNN's,
// the preloader) inherits the mask, so no library call is ever interrupted by them, and the
// main thread collects a pending one synchronously at the next control point. (An asynchronous
// handler corrupted the heap intermittently: a library interrupted mid-call.)
// A signal whose disposition is SIG_IGN is discarded even while blocked, and bash starts
// background jobs with SIGINT ignored: each stop signal gets the default disposition first (it
// never acts, being blocked in every thread, but it lets the signal wait to be collected).
void install_stop_signal_handlers() {
  sigset_t set = stop_signals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  for (int sig : {SIGTERM, SIGUSR1, SIGINT}) std::signal(sig, SIG_DFL);
}

int stop_signal_received() {
  if (g_stop_signal) return g_stop_signal;
  sigset_t set = stop_signals();
  const timespec no_wait{0, 0};
  const int sig = sigtimedwait(&set, nullptr, &no_wait);
  if (sig > 0) g_stop_signal = sig;
  return g_stop_signal;
}

RunControl::RunControl(const RunConfig& config, double walltime_s, Communicator& comm,
                       std::chrono::steady_clock::time_point start)
    : config_(config), walltime_s_(walltime_s), comm_(comm), start_(start) {}

double RunControl::elapsed() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void RunControl::checkpoint_written(double seconds) {
  checkpoint_seconds_ = std::max(checkpoint_seconds_, seconds);
  last_checkpoint_time_ = elapsed();
}

// From the slower of the last step and the mean since the last sync, not one step's time: one
// fast step under a loaded node once made the interval seconds long and a stop signal outlived
// mpirun's grace. The interval at most doubles per sync, so it settles after a few syncs.
double RunControl::next_sync_interval(double step_seconds) const {
  const double mean = seconds_since_sync_ / double(std::max<int64_t>(steps_since_sync_, 1));
  const double typical = std::max({step_seconds, mean, 1e-6});
  const double ceiling = std::min(kMaxSyncInterval, 2.0 * double(sync_interval_));
  return std::clamp(std::floor(kSyncPeriod / typical), 1.0, std::max(ceiling, 1.0));
}

RunAction RunControl::after_step(double step_seconds, int64_t pass) {
  if (pass >= 0 && pass == last_pass_) return last_action_;
  RunAction action;
  slowest_step_ = std::max(slowest_step_, step_seconds);
  seconds_since_sync_ += step_seconds;
  ++steps_since_sync_;
  last_pass_ = pass;
  last_action_ = action;
  if (++decisions_ < next_sync_) return action;

  // {signal, time says checkpoint, walltime says stop, next interval}: only rank 0 contributes
  // the last three, so the sum is rank 0's decision.
  double v[4] = {double(stop_signal_received()), 0, 0, 0};
  if (comm_.rank() == 0) {
    const double now = elapsed();
    const double every_s = config_.checkpoint.every_seconds;
    if (every_s > 0 && now - last_checkpoint_time_ >= every_s) v[1] = 1;
    if (walltime_s_ > 0) {
      // Stop while there is still time for the next sync interval and one checkpoint write,
      // with the deck's margin on top for the scheduler's own slack.
      const double needed = config_.checkpoint.walltime_margin + sync_interval_ * slowest_step_ +
                            2 * checkpoint_seconds_;
      if (walltime_s_ - now < needed) v[2] = 1;
    }
    v[3] = next_sync_interval(step_seconds);
  }
  comm_.allreduce_sum(v, 4, 0);
  sync_interval_ = int64_t(v[3]);
  seconds_since_sync_ = 0;
  steps_since_sync_ = 0;
  next_sync_ = decisions_ + sync_interval_;
  if (v[0] > 0) {
    action.checkpoint = action.stop = true;
    // The sum of signal numbers is not a signal number; report ours, or the common one.
    action.signal = stop_signal_received() ? stop_signal_received() : int(v[0]);
  }
  if (v[1] > 0) action.checkpoint = true;
  if (v[2] > 0) action.checkpoint = action.stop = action.walltime = true;
  last_action_ = action;
  return action;
}

}  // namespace wt

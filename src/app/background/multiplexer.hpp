#pragma once
// DeepPool's foreground/background multiplexing on one rank (§5; research/seeds-next.md §2.4,
// option C): the foreground job's steps run as always, and whenever every foreground stream is
// blocked on a Wait (a receive from a peer, a collective in flight) the rank runs the local
// background job's work instead, under DeepPool's mechanisms:
//   - priority: background work only while no foreground stream can issue;
//   - pacing: the background step cut into tasklets of at most tasklet_ms (node ranges, by the
//     background's profiled solo step), at most `depth` tasklets per idle check, the
//     foreground's communication polled between background nodes;
//   - slowdown feedback and the allreduce and long-receive rules (background_gate.hpp), from the
//     foreground's instruction times in its first warmup_steps steps, run alone;
//   - at the step's end, while this rank waits for its peers to finish theirs (fill_step_end).
// The background's steps run on and on across foreground steps until its deck's total; the
// foreground's are untouched (separate model, optimizer, data, generator and memory account).
// A background out-of-memory drops that background step (three in a row stop the background);
// any other failure of the background (it diverged, its dataset changed, a write of its own
// failed) stops it, logged with its "[background r]" prefix and in its own log. Neither ever
// fails the foreground. Ablations: priority = false makes the background an
// equal-priority stream (a foreground instruction and a background tasklet in turn, no gate);
// pacing = false runs a whole background step at a time. fit_to_wait (ours, not the paper's):
// a tasklet also ends before the foreground's wait is expected to (its solo time less the time
// waited so far), so a node that would run over the foreground's next instruction waits.
//
// policy = "foreground_first" (ours, the default; "deeppool" is the paper's alone): fit_to_wait,
// the background's batch split into micro-batches when its nodes are longer than a tasklet
// (background_split.hpp), and the whole-run budget (RunBudget): a step beside background work
// only while the foreground's steps so far took at most slowdown_target x the solo step.
//
// Every tasklet (and the first hold of each kind per wait and step) is a row of
// <background run dir>/tasklets.csv, times in steady_clock seconds (trace.h5's clock_origin_ns),
// idle_left_ms the foreground's expected idle time left when it began (-1: none known).
#include <cstdio>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "app/background/background_gate.hpp"
#include "app/background/lead_wait.hpp"
#include "app/step_driver.hpp"
#include "app/step_observer.hpp"
#include "deck/run_config.hpp"
#include "mem/caching_allocator.hpp"

namespace wt {

class Job;

struct MultiplexTotals {
  int64_t background_steps = 0;  // finished, in the foreground's idle time or alone
  int64_t dropped_steps = 0;     // out of memory
  int64_t tasklets = 0;
  int64_t holds = 0;               // the gate's holds: the first of each kind per wait and step
  double background_seconds = 0;   // inside tasklets
  int64_t budget_solo_steps = 0;   // steps the whole-run budget ran alone (foreground_first)
  double foreground_slowdown = 1;  // its steps' total over their count x the solo step
  std::string stopped;             // why the background stopped on a failure; "" = it did not
};

class Multiplexer : public StepDriver {
 public:
  Multiplexer(Job& foreground, Job& background, std::vector<StepObserver*> background_observers,
              const RunConfig::Background& settings, const std::string& tasklet_log);
  ~Multiplexer() override;
  StepStats run_step(Job& job, int64_t step, bool quiet_end) override;
  // After the foreground's last step: the background's step in hand finished alone, then its
  // observers' finish (the end checkpoint, the summary).
  void finish();
  const MultiplexTotals& totals() const { return totals_; }
  // The background this rank trains from now on (nullptr: none, it was left out), with its
  // observers; before its first step only.
  void adopt_background(Job* background, std::vector<StepObserver*> observers);
  // Called once, after the foreground's warm-up, with the longest wait it showed on this rank
  // that background work may fill (seconds; 0 when none): the caller may adopt a background
  // better fitted to it, or none (every rank then agrees whether any still multiplexes).
  void set_refit(std::function<void(double longest_wait_s)> refit) { refit_ = std::move(refit); }
  // Test hook (WAVETRAIN_TEST_SLOW_FOREGROUND): whenever the foreground is blocked at
  // (stream, index) in steps [from, to), the rank sleeps `seconds` plus `times_solo` times that
  // instruction's solo time first, as if it ran slower (a multiple of the solo time is the same
  // slowdown on a fast machine and a loaded one).
  void slow_foreground(int stream, size_t index, double seconds, double times_solo, int64_t from,
                       int64_t to);
  // Test hook (WAVETRAIN_TEST_BUDGET_DEBT): this rank's run budget `seconds` in debt.
  void charge_budget(double seconds) { budget_.charge(seconds); }

 private:
  void agree_whether_any_rank_multiplexes();
  void profile_background();
  double longest_wait_seconds() const;
  void prioritized_step(int64_t step);
  void equal_priority_step(int64_t step);
  // held: a solo step of the whole job (the warm-up, the budget's); background work may fill
  // the wait otherwise.
  // vote: the foreground's on a non-finite gradient (Job::finish_local_step), carried in the
  // arrival; returns the votes summed over the ranks (-1: no arrival ran, the guard agrees).
  // quiet_end: as run_step's; a tasklet may run on into the next step's first receive.
  double fill_step_end(int64_t step, bool warming_up, bool held, double vote, bool quiet_end);
  bool budget_admits(int64_t step);
  // One tasklet of the background (or a whole step without pacing); false when the background
  // has nothing left to run.
  // idle_left_s: the foreground's expected idle time left (kNoBound: none known), a bound on
  // the tasklet under fit_to_wait, logged either way; false
  // when nothing fitted it.
  bool run_tasklet(const GateResult& why, int64_t step, double idle_left_s);
  void issue_tasklet(double& planned_s, int& count, double idle_left_s);
  double expected_idle_left(const Executor& fg);
  static constexpr double kNoBound = 1e30;
  bool background_active() const { return !background_done_; }
  void begin_background_step();
  void finish_background_step();
  // Runs background work: an out-of-memory drops the step, any other error stops the background.
  // False when it failed.
  bool background_work(const std::function<void()>& work);
  void drop_background_step(const OutOfMemory& error);
  void stop_background(const std::exception& error);
  void hold(const GateResult& why, int64_t step);
  void apply_slow_hook(int64_t step);
  void log_row(const char* kind, const GateResult& why, int64_t step, double begin, double end,
               double planned_s, int64_t bg_step, int instructions, double idle_left_s);
  void warn_long_nodes();

  Job& fg_;
  Job* bg_ = nullptr;
  std::vector<StepObserver*> bg_observers_;
  RunConfig::Background settings_;
  SlowdownFeedback feedback_;
  RunBudget budget_;  // the whole run's slowdown (every policy measures it; foreground_first acts)
  BackgroundGate gate_;
  LeadWait lead_;  // the step's first wait, timed from the peers' arrival
  std::unique_ptr<InstructionTimes> bg_times_;
  int bg_stream_ = 0;  // the background program's one stream
  int64_t bg_step_ = 0;
  bool background_begun_ = false, background_done_ = false;
  double background_step_began_ = 0;
  int consecutive_drops_ = 0;
  std::function<void(double)> refit_;
  int64_t held_until_ = -1;  // the last step of the agreed streak of steps alone
  double late_start_s_ = 0;  // how long after its peers' arrival this rank left the last step
  bool any_rank_multiplexes_ = true;  // false: every rank's background left out at the refit
  struct BlockedAt {                  // per stream: the wait it is blocked at, timed from since
    const Instruction* wait = nullptr;
    double since = 0, expected = -1;
  };
  std::vector<BlockedAt> blocked_at_;
  struct StepEndWait {  // fill_step_end's wait for the peers, as the feedback tracks a wait
    std::vector<double> solo_runs;    // the warm-up steps' (solo_mean)
    std::vector<double> recent_solo;  // the last kRecentSoloRuns steps alone, warm-up included
    double average_s = -1;            // since; -1 until the first
    void add_solo_run(double seconds);
    double expected_seconds() const;  // the recent solo runs' lower median, -1 when none
  } step_end_;
  MultiplexTotals totals_;
  std::FILE* log_ = nullptr;
  int64_t last_hold_step_ = -1;
  std::vector<int> logged_holds_;  // this step: kind * 1e6 + stream * 1e5 + index, logged once
  struct SlowHook {
    int stream = -1;
    size_t index = 0;
    double seconds = 0, times_solo = 0;
    int64_t from = 0, to = 0, slowed_step = -1;
  } slow_;
};

}  // namespace wt

#pragma once
// DeepPool's slowdown feedback loop (§5; its Manager's `recent_us`): every foreground
// instruction's time since the solo steps is tracked as an average that reacts at once to a run
// slower than target x solo (weight `fast`, 1.0) and relaxes slowly otherwise (weight `slow`,
// 0.1); background work is held while the foreground is in an instruction whose average is above
// the target. After a 2x spike, ~22 runs at the solo time bring the average back under 1.1x.
#include <cstdint>
#include <deque>
#include <vector>

#include "app/background/instruction_times.hpp"

namespace wt {

struct FeedbackSettings {
  double target = 1.1;
  double fast = 1.0;
  double slow = 0.1;
};

// The running average after a run of `run` seconds, from `average` (the solo time before any).
double slowdown_average(const FeedbackSettings& settings, double average, double run, double solo);

class SlowdownFeedback : public InstructionObserver {
 public:
  SlowdownFeedback(const RankProgram& program, FeedbackSettings settings);
  // While warming up, runs are the solo times; afterwards they update the averages.
  void set_warming_up(bool warming_up);
  const InstructionTimes& solo() const { return solo_; }
  // Whether the step under way runs alone after the warm-up (the run budget's steps alone and
  // every solo_every-th): its runs join the recent solo runs.
  void set_solo_step(bool solo);
  // How long the instruction is expected to take: the lower median of its last kRecentSoloRuns
  // runs alone (warm-up included), -1 when unknown. Current (the steps alone keep coming:
  // every solo_every-th and the budget's), where the warm-up's two runs said once what a wait
  // takes, though its length follows its peers' steps and the machine's load.
  double expected_seconds(int stream, size_t index) const;
  static constexpr size_t kRecentSoloRuns = 8;
  // The running average (seconds; the solo time until a run updates it), -1 when unknown.
  double average_seconds(int stream, size_t index) const;
  bool above_target(int stream, size_t index) const;
  // When the instruction's last run (in any step) ended, steady seconds; -1 before it ran.
  double last_end(int stream, size_t index) const { return last_end_[size_t(stream)][index]; }
  const FeedbackSettings& settings() const { return settings_; }

  void executed(int stream, const Instruction& ins, double t_begin, double t_end,
                int64_t bytes) override;
  void completed(int, double) override {}

 private:
  FeedbackSettings settings_;
  InstructionTimes solo_;
  InstructionTimes recent_solo_;
  bool warming_up_ = true;
  std::vector<std::vector<double>> average_;   // [stream][index]; -1 until the first update
  std::vector<std::vector<double>> last_end_;  // [stream][index]
};

// policy = "foreground_first": what the foreground pays over the whole run, step by step. The
// per-instruction feedback above sees one wait at a time and misses what falls between them (a
// stalled transfer, a tasklet that ran over the step's end); this sees the step's wall time.
// Its debt is the seconds the run's steps took beyond target x the solo step; background work is
// admitted only while the debt is not positive, so a costly background step is repaid by steps
// alone. Credit banked by steps faster than the target is capped (max_credit_steps solo steps'
// worth of the target's slack), so a cheap start cannot pay for a slow end. Every solo_every-th
// step runs alone: the solo step time is the mean of the recent solo steps (a mean, as the run's
// total is a sum: a loaded machine's stalls count on both sides), current when the load changes.
// The whole run so far, priced at the current solo estimate, must be within target as well.
class RunBudget {
 public:
  RunBudget(double target, int64_t solo_every, double max_credit_steps = 25);
  // Whether the next step may run beside background work.
  bool admits() const;
  // What admits() will say once the step under way is recorded (solo or not), by the debt as it
  // stands (that step's time is not known yet).
  bool admits_after_step(bool solo) const;
  // The steps alone it asks for once the step under way is recorded: 0 when it admits the
  // next; else at least one, and as many as repay its debt and bring the whole run within
  // target at the current solo estimate (a solo step earns (target - 1) x solo), at most
  // kMaxSoloStreak. Several ranks agree on a streak so that its steps need no vote.
  int64_t solo_steps_after_step(bool solo) const;
  static constexpr int64_t kMaxSoloStreak = 25;
  // A step of `seconds`; solo when no background work ran in it. late_start_s: how long after
  // its peers' arrival at the step before this rank began it (still in a background node): a
  // solo step is timed from that arrival for the solo estimate, since the late start shortened
  // it on this rank alone (a pipeline's later stage, whose next input came when it came).
  void record_step(double seconds, bool solo, double late_start_s = 0);
  // Foreground time spent on background work outside its steps, owed at once.
  void charge(double seconds) {
    debt_s_ += seconds;
    charged_s_ += seconds;
  }
  // A one-off cost (profiling the background after the warm-up), owed pro rata over the run's
  // next `steps` steps: owed at once it held the background for a streak of steps alone at the
  // start (74 of a 1000-step lenet run, each repaying 10% of a step), where steps beside it that
  // run under target repay it as well. The whole run still pays all of it by its end.
  void charge_over_run(double seconds, int64_t steps);
  double solo_step_seconds() const;  // -1 before the first solo step
  double debt_seconds() const { return debt_s_; }
  // The steps' total over their count times the solo step (1 before any).
  double slowdown() const;

 private:
  double target_;
  int64_t solo_every_;
  double max_credit_steps_;
  std::deque<double> recent_solo_;  // the last few solo steps' seconds
  int64_t since_solo_ = 0;          // steps since the last solo one
  int64_t steps_ = 0;
  double total_s_ = 0, debt_s_ = 0, charged_s_ = 0;
  double spread_s_ = 0;                         // charge_over_run's, owed step by step
  int64_t spread_from_ = 0, spread_steps_ = 1;  // from steps_ then, over so many
  double charged_due() const;                   // charged_s_ and what is due of spread_s_
  // A solo time known, since_solo steps since the last solo one, and the debt within budget.
  bool admits_given(bool solo_known, int64_t since_solo) const;
};

}  // namespace wt

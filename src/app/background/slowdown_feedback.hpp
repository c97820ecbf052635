#pragma once
// DeepPool's slowdown feedback loop (§5; its Manager's `recent_us`): every foreground
// instruction's time since the solo steps is tracked as an average that reacts at once to a run
// slower than target x solo (weight `fast`, 1.0) and relaxes slowly otherwise (weight `slow`,
// 0.1); background work is held while the foreground is in an instruction whose average is above
// the target. After a 2x spike, ~22 runs at the solo time bring the average back under 1.1x.
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
  // The running average (seconds; the solo time until a run updates it), -1 when unknown.
  double average_seconds(int stream, size_t index) const;
  bool above_target(int stream, size_t index) const;
  const FeedbackSettings& settings() const { return settings_; }

  void executed(int stream, const Instruction& ins, double t_begin, double t_end,
                int64_t bytes) override;
  void completed(int, double) override {}

 private:
  FeedbackSettings settings_;
  InstructionTimes solo_;
  bool warming_up_ = true;
  std::vector<std::vector<double>> average_;  // [stream][index]; -1 until the first update
};

}  // namespace wt

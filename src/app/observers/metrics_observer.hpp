#pragma once
// metrics.csv's train rows: every train.log_every_steps steps and at each epoch's end, the loss
// and accuracy since the last row summed over the ranks (a collective on every rank), samples/s,
// memory and the preload counters. A non-finite summed loss ends the run (Diverged) when
// failure.on_nonfinite = "stop": every rank sees the same sum, so every rank stops alike; so does
// a loss far above its running average (app/loss_explosion.hpp) with failure.on_explosion.
#include <chrono>

#include "app/loss_explosion.hpp"
#include "app/step_observer.hpp"
#include "deck/run_config.hpp"
#include "io/metrics_writer.hpp"

namespace wt {

class MetricsObserver : public StepObserver {
 public:
  // run_start: when the run began (wall_s counts from it, after the resumed run's time).
  // failure: the deck's [failure] section (on_explosion, explosion_factor).
  MetricsObserver(std::chrono::steady_clock::time_point run_start,
                  const RunConfig::Failure& failure);
  void after_step(Job& job, const StepRecord& record) override;
  bool may_communicate_after(const Job& job, int64_t step) const override;  // its rows
  // Time spent outside training (an evaluation) does not count against samples/s.
  void restart_clock() { window_start_ = std::chrono::steady_clock::now(); }
  // A row's common columns: step, epoch, wall time and memory.
  MetricsRow row(Job& job, const char* kind, int64_t steps_done) const;
  // The training loss of the latest row, summed over the ranks (the same on every rank), and the
  // steps done then; steps 0 before the first row.
  struct LatestLoss {
    double loss = 0;
    int64_t steps_done = 0;
  };
  const LatestLoss& latest_loss() const { return latest_; }

 private:
  std::chrono::steady_clock::time_point run_start_, window_start_;
  StepStats window_;
  int64_t steps_ = 0;
  LossExplosionWatch explosions_;
  LatestLoss latest_;
};

}  // namespace wt

#pragma once
// Divergence that is not NaN: a training loss that grows far above where it has been, long
// before it overflows (a learning rate a little too high, a bad batch order). Fed each metrics
// row's mean training loss, which is summed over the ranks and so the same on every rank: every
// rank judges alike without a collective of its own.
//
// The running average is an exponential one over the rows (weight kRowWeight for the newest), so
// it follows the loss down as training converges; a row above `factor` times it is an explosion.
// The first row only seeds the average.
#include <cstdint>
#include <string>

namespace wt {

class LossExplosionWatch {
 public:
  static constexpr double kRowWeight = 0.1;

  // mode: failure.on_explosion ("warn", "stop" or "off"); factor: failure.explosion_factor (> 1).
  LossExplosionWatch(const std::string& mode, double factor);

  // One metrics row: its mean training loss after `steps_done` steps, over the last
  // `window_steps` steps. Returns what exploded ("" when nothing did, or when off). Non-finite
  // losses are the non-finite guard's: ignored here.
  std::string check(int64_t steps_done, double mean_loss, int64_t window_steps);

  bool stops() const { return mode_ == "stop"; }

 private:
  std::string mode_;
  double factor_;
  double average_ = 0;
  bool seeded_ = false;
};

}  // namespace wt

#include "app/loss_explosion.hpp"

#include <cmath>
#include <cstdio>

namespace wt {

LossExplosionWatch::LossExplosionWatch(const std::string& mode, double factor)
    : mode_(mode), factor_(factor) {}

std::string LossExplosionWatch::check(int64_t steps_done, double mean_loss, int64_t window_steps) {
  if (mode_ == "off" || !std::isfinite(mean_loss)) return "";
  if (!seeded_) {
    average_ = mean_loss;
    seeded_ = true;
    return "";
  }
  std::string what;
  if (average_ > 0 && mean_loss > factor_ * average_) {
    char text[320];
    std::snprintf(text, sizeof text,
                  "loss exploded at step %lld: the mean training loss over the last %lld steps, "
                  "%.4g, is %.1f times its running average %.4g (failure.explosion_factor = %g)",
                  (long long)steps_done, (long long)window_steps, mean_loss, mean_loss / average_,
                  average_, factor_);
    what = text;
  }
  average_ = (1 - kRowWeight) * average_ + kRowWeight * mean_loss;
  return what;
}

}  // namespace wt

#include "ops/lr_schedule.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace wt {

double learning_rate(const LrScheduleOptions& s, double peak, int64_t step, int64_t total_steps) {
  if (step < 0) throw std::invalid_argument("learning_rate: negative step");
  const bool warming = s.warmup_steps > 0 && step < s.warmup_steps;
  const double warmup = warming ? static_cast<double>(step) / s.warmup_steps : 1.0;

  if (s.kind == "constant") return peak * warmup;
  if (s.kind == "step") {
    const int64_t decays = step / std::max<int64_t>(1, s.step_size);
    return peak * std::pow(s.gamma, static_cast<double>(decays)) * warmup;
  }
  if (s.kind == "cosine") {
    if (warming) return peak * warmup;
    const int64_t decay_steps = total_steps - s.warmup_steps;
    if (decay_steps <= 0) return s.min_lr;
    const double progress = std::min(
        1.0, static_cast<double>(step - s.warmup_steps) / static_cast<double>(decay_steps));
    return s.min_lr + (peak - s.min_lr) * 0.5 * (1.0 + std::cos(M_PI * progress));
  }
  throw std::invalid_argument("learning_rate: unknown lr_schedule.kind '" + s.kind + "'");
}

}  // namespace wt

#pragma once
// The learning rate at each step, from [optimizer] lr and [lr_schedule].
#include <cstdint>

#include "ops/optimizer_options.hpp"

namespace wt {

// `step` is 0-based; `total_steps` is the length of the run (cosine decays to min_lr there).
// Every kind first ramps linearly from 0 over warmup_steps: lr * step / warmup_steps.
//   constant: lr
//   step:     lr * gamma^floor(step / step_size)
//   cosine:   min_lr + (lr - min_lr) * (1 + cos(pi * (step - warmup) / (total - warmup))) / 2
// peak_lr: the optimizer's lr.
double learning_rate(const LrScheduleOptions& schedule, double peak_lr, int64_t step,
                     int64_t total_steps);

}  // namespace wt

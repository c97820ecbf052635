#pragma once
// What the deck's [optimizer] and [lr_schedule] tables tell the optimizers and the learning-rate
// schedule (the deck's RunConfig sections are these structs).
#include <cstdint>
#include <string>

namespace wt {

struct OptimizerOptions {
  std::string kind = "sgd";  // sgd | adamw
  double lr = 0.01;
  double momentum = 0.9;  // sgd
  double weight_decay = 0.0;
  bool nesterov = false;                          // sgd
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;  // adamw
};

struct LrScheduleOptions {
  std::string kind = "constant";  // constant | step | cosine
  int64_t warmup_steps = 0;       // linear warmup from 0 (every kind)
  int64_t step_size = 1000;       // step: multiply by gamma every step_size steps
  double gamma = 0.1;
  double min_lr = 0.0;  // cosine floor
};

}  // namespace wt

#pragma once
// Decides, before each optimizer step, whether the step may change the parameters: a NaN or Inf
// in a stage's gradient (checked after the allreduce, so a bad sample on any rank is in every
// rank's summed gradient and all ranks decide alike without an extra collective) either stops the
// run (failure.on_nonfinite = "stop": throws Diverged, which main() maps to exit status 4) or
// skips the step on every rank ("skip": no parameter or optimizer-state change; counted).
//
// Limits: with a schedule that splits the model over ranks, each rank judges only the stages it
// steps (a NaN normally reaches every stage's gradient through backward). Buffers updated in the
// forward pass (batch-norm running statistics) are not rolled back by a skip.
#include <cstdint>
#include <stdexcept>
#include <string>

#include "ops/ops_backend.hpp"
#include "tensor/tensor.hpp"

namespace wt {

// The run diverged with failure.on_nonfinite = "stop". Every rank of the gradient group throws
// it at the same step; main() prints the message once and exits 4.
class Diverged : public std::runtime_error {
 public:
  explicit Diverged(const std::string& message) : std::runtime_error(message) {}
};

class NonFiniteGuard {
 public:
  // on_nonfinite: "stop" or "skip" (the deck's failure.on_nonfinite).
  // ops: the kernels of the device the gradients live on (the check runs there).
  NonFiniteGuard(const std::string& on_nonfinite, const OpsBackend& ops);

  // Called with a stage's summed gradient right before its optimizer step. Returns whether the
  // step may proceed; throws Diverged in "stop" mode.
  bool allow_step(int64_t step, int stage, const Tensor& grads);

  // Steps with at least one stage skipped, over the run.
  int64_t skipped_steps() const { return skipped_steps_; }
  // Whether the step last passed to allow_step was skipped (for the trainer's log line).
  bool skipped(int64_t step) const { return last_skipped_step_ == step; }
  // What was wrong with the last skipped step, e.g. "stage 0: 12 of 269322 gradient values".
  const std::string& last_reason() const { return last_reason_; }

 private:
  const OpsBackend& ops_;
  bool stop_;
  int64_t skipped_steps_ = 0;
  int64_t last_skipped_step_ = -1;
  std::string last_reason_;
};

}  // namespace wt

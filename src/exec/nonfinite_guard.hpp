#pragma once
// Decides, before each optimizer step, whether the step may change the parameters: a NaN or Inf
// in a stage's gradient either stops the run (failure.on_nonfinite = "stop": Diverged, which
// main() maps to exit status 4) or skips the stage's step ("skip": no parameter or
// optimizer-state change; counted).
//
// Every rank of the job must stop at the same step, or the ones still training wait for ever
// in the step's next receive or broadcast. Two cases:
//   - every rank steps every stage on the gradient summed over all ranks (gang, ticktock): all
//     see the same NaN and throw at the same instruction, without an extra collective;
//   - otherwise (master sync, pipeline, waves, burst segments on fewer ranks) only a stage's
//     steppers see its gradient. The guard is then `deferred`: in stop mode it only records the
//     divergence and holds back that stage's update, the step runs to its end on every rank, and
//     end_step() agrees on it in one small allreduce: every rank throws the same Diverged.
//
// Limits: in skip mode under a deferred schedule each rank skips only the stages it steps (a NaN
// normally reaches every stage's gradient through backward). Buffers updated in the forward pass
// (batch-norm running statistics) are not rolled back by a skip.
#include <cstdint>
#include <stdexcept>
#include <string>

#include "comm/communicator.hpp"
#include "ops/ops_backend.hpp"
#include "tensor/tensor.hpp"

namespace wt {

// The run diverged with failure.on_nonfinite = "stop". Every rank of the job throws it at the
// same step with the same message; main() prints it once and exits 4.
class Diverged : public std::runtime_error {
 public:
  explicit Diverged(const std::string& message) : std::runtime_error(message) {}
};

class NonFiniteGuard {
 public:
  // on_nonfinite: "stop" or "skip" (the deck's failure.on_nonfinite).
  // ops: the kernels of the device the gradients live on (the check runs there).
  // deferred: not every rank sees every stage's summed gradient (see above).
  NonFiniteGuard(const std::string& on_nonfinite, const OpsBackend& ops, bool deferred = false);

  // Called with a stage's summed gradient right before its optimizer step. Returns whether the
  // step may proceed. In stop mode it throws Diverged, or, deferred, records the divergence for
  // end_step() and returns false.
  bool allow_step(int64_t step, int stage, const Tensor& grads);
  // After every step on every rank of `comm` (collective when deferred; nothing otherwise):
  // throws Diverged on every rank if any rank recorded a divergence in `step`.
  void end_step(int64_t step, Communicator& comm);

  bool deferred() const { return deferred_; }
  // Steps with at least one stage skipped, over the run.
  int64_t skipped_steps() const { return skipped_steps_; }
  // Whether the step last passed to allow_step was skipped (for the trainer's log line).
  bool skipped(int64_t step) const { return last_skipped_step_ == step; }
  // What was wrong with the last skipped step, e.g. "stage 0: 12 of 269322 gradient values".
  const std::string& last_reason() const { return last_reason_; }

 private:
  // The first divergence this rank saw in the current step (stage -1: none).
  struct Divergence {
    int64_t step = -1;
    int stage = -1;
    int64_t nonfinite = 0, values = 0;
  };

  const OpsBackend& ops_;
  bool stop_;
  bool deferred_;
  Divergence pending_;
  int64_t skipped_steps_ = 0;
  int64_t last_skipped_step_ = -1;
  std::string last_reason_;
};

}  // namespace wt

#pragma once
// Decides whether each optimizer update may change the parameters: a NaN or Inf in a stage's
// gradient either stops the run (failure.on_nonfinite = "stop": Diverged, which main() maps to
// exit status 4) or skips the stage's update ("skip": no parameter or optimizer-state change;
// counted).
//
// The decision is made on the device, without a host synchronisation per stage: the Step
// instruction counts the gradient's NaN/Inf values into this guard's device tensor
// (count_nonfinite_into at flag()), and the update kernel takes that count as its skip flag. After
// the step (device.overlap_steps: possibly once the next step is issued, so the flags are kept per
// step parity), end_step() brings every count to the host in one staged copy, un-counts the
// skipped updates in the optimizer (Optimizer::uncount_step: they changed nothing), and stops or
// counts.
//
// Every rank of the job must stop at the same step, or the ones still training wait for ever
// in the next step's receive or broadcast. All ranks finish the step (a flagged update does
// nothing) and end_step() decides:
//   - every rank steps every stage on the gradient summed over all ranks (gang, ticktock): all
//     see the same counts and throw the same Diverged, without an extra collective;
//   - otherwise (master sync, pipeline, waves, burst segments on fewer ranks) only a stage's
//     steppers see its gradient. The guard is then `deferred`: in stop mode end_step() agrees on
//     a divergence in one small allreduce, and every rank throws the same Diverged.
//
// Limits: in skip mode under a deferred schedule each rank skips only the stages it steps (a NaN
// normally reaches every stage's gradient through backward). Buffers updated in the forward pass
// (batch-norm running statistics) are not rolled back by a skip.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "exec/step_readback.hpp"
#include "mem/caching_allocator.hpp"
#include "ops/kernel_args.hpp"
#include "ops/optimizers.hpp"
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
  // on_nonfinite: "stop" or "skip" (the deck's failure.on_nonfinite). optimizer: whose state keys
  // (replica * stages + stage, as the executor's Step uses) are guarded. memory: the device the
  // gradients live on (the counts are kept there). deferred: not every rank sees every stage's
  // summed gradient (see above).
  NonFiniteGuard(const std::string& on_nonfinite, Optimizer& optimizer, CachingAllocator& memory,
                 int replicas, int stages, bool deferred = false);

  // Called by the Step of optimizer key `key` (replica * stages + stage) in `step`, before it
  // issues its kernels: where count_nonfinite_into stores the count of its gradient of `values`
  // floats, which the update then takes as its skip flag. One Step per key and step.
  float* flag(int64_t step, int key, int64_t values);
  // The counts live in `readback` from now on and come back in its one copy per step (the
  // executor's totals share it); before the first step.
  void use_readback(StepReadback& readback);
  // After every step on every rank of `comm` (collective when deferred; nothing otherwise): reads
  // the step's counts in one staged copy, takes the skipped updates back from the optimizer, and
  // in stop mode throws Diverged on every rank if any rank found a non-finite gradient in `step`.
  void end_step(int64_t step, Communicator& comm);
  // end_step in two halves, for a caller that carries the agreement in a collective of its own
  // (the multiplexer's step-end arrival, so that a rank still busy with background work does not
  // hold its peers in one more): vote() reads the step's counts as end_step does and returns 1
  // when this rank found a non-finite gradient, else 0; end_step(step, comm, votes) decides with
  // the votes summed over every rank of comm (a collective only on the rare path that names the
  // finding), or, where votes < 0, agrees on them itself as end_step does.
  double vote(int64_t step);
  void end_step(int64_t step, Communicator& comm, double votes);

  bool deferred() const { return deferred_; }
  // Steps with at least one stage skipped, over the run.
  int64_t skipped_steps() const { return skipped_steps_; }
  // Whether end_step(step) skipped an update (for the trainer's log line).
  bool skipped(int64_t step) const { return last_skipped_step_ == step; }
  // What was wrong with the last skipped step (its lowest stage), e.g.
  // "stage 0: 12 of 269322 summed gradient values are NaN or Inf".
  const std::string& last_reason() const { return last_reason_; }

 private:
  // A non-finite gradient this rank found in a step (stage -1: none).
  struct Finding {
    int stage = -1;
    int64_t nonfinite = 0, values = 0;
  };
  // The step's counts from the device; un-counts the skipped updates; the lowest stage's finding.
  Finding read_counts(int64_t step);
  // Stops, skips or goes on by `mine` and, deferred in stop mode, every rank's: `votes` summed
  // (vote()), or agreed here when negative.
  void conclude(int64_t step, Communicator& comm, const Finding& mine, double votes);

  int64_t count_floats() const { return int64_t(keys_) * ops::kCountFloats; }
  // The flags of `step`: by its parity, since the next step's Steps may be issued before this
  // one's counts are read (device.overlap_steps leaves one step running).
  std::vector<int64_t>& flagged_step(int64_t step) { return flagged_step_[step & 1]; }
  std::vector<int64_t>& values(int64_t step) { return values_[step & 1]; }

  Optimizer& optimizer_;
  CachingAllocator& memory_;
  bool stop_;
  bool deferred_;
  int stages_;
  // [key * kCountFloats]: each key's count (ops::store_count); valid where flagged_step_ says so.
  Tensor counts_;  // ... here, or from counts_at_ of readback_ when given
  StepReadback* readback_ = nullptr;
  int64_t counts_at_ = 0;
  size_t keys_;
  // Per step parity, [key]: the step whose Step last wrote the count, or -1; that gradient's
  // length.
  std::vector<int64_t> flagged_step_[2];
  std::vector<int64_t> values_[2];
  int64_t skipped_steps_ = 0;
  int64_t last_skipped_step_ = -1;
  std::string last_reason_;
  Finding voted_;  // vote()'s finding, for end_step(step, comm, votes)
  int64_t voted_step_ = -1;
};

}  // namespace wt

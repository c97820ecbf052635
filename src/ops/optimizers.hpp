#pragma once
// Optimizers over a stage's flat parameter/gradient buffers (one contiguous float array each).
// SGD and AdamW reproduce torch.optim.SGD (dampening 0) and torch.optim.AdamW (amsgrad off)
// update for update, so runs can be compared with PyTorch step by step.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "device/device_context.hpp"
#include "ops/optimizer_options.hpp"
#include "ops/per_step_values.hpp"
#include "tensor/tensor.hpp"

namespace wt {

class Optimizer {
 public:
  virtual ~Optimizer();
  // One update of `values` from `grads` (same numel). State is kept per stage index; the first
  // call for a stage allocates it zeroed.
  // `stream`: the stream the update is issued on (the Step instruction's). `skip`: nullptr, or a
  // device count (ops_backend.hpp) that, when nonzero, makes the update change nothing; the step
  // is counted all the same (the host cannot know yet): uncount_step() takes it back.
  virtual void step(int stage, Tensor& values, const Tensor& grads, double lr, int stream = 0,
                    const float* skip = nullptr) = 0;
  // Named state tensors for checkpoints, e.g. {"momentum", t} or {"exp_avg", t},
  // {"exp_avg_sq", t}. Empty until the stage's state exists (see prepare()).
  virtual std::vector<std::pair<std::string, Tensor*>> state(int stage) = 0;
  // The names state() gives every stage, known without allocating any (checkpoint writers that
  // do not own a stage still create its datasets collectively).
  virtual std::vector<std::string> state_names() const = 0;
  // Allocates zeroed state for a stage of `numel` parameters, so a checkpoint can be loaded into
  // state() before the first step. Idempotent; throws std::invalid_argument on a size change.
  // stream >= 0: zeroed on that stream without waiting (the first Step issuing it).
  virtual void prepare(int stage, int64_t numel, int stream = -1) = 0;
  // Updates done on a stage (AdamW's bias correction and SGD's first-step rule depend on it).
  virtual int64_t step_count(int stage) const;
  virtual void set_step_count(int stage, int64_t n);
  // The stage's last update was skipped on the device (its flag was nonzero): it does not count,
  // so the next update is the one the skipped one would have been (SGD's first-step rule, AdamW's
  // bias correction) and checkpoints hold only updates that happened.
  void uncount_step(int stage);
  // Whole-step graphs: the updates read their per-step values (the learning rate, AdamW's bias
  // corrections) from device memory written each step (ops/per_step_values.hpp), instead of by
  // value; new_step() starts a step's records, in pinned set `set` (per_step_values.hpp).
  void use_per_step_values(DeviceContext& device);
  void new_step(int set = 0) {
    if (per_step_) per_step_->new_step(set);
  }

 protected:
  // The device record of this update's per-step values, or nullptr when they go by value.
  const float* per_step_values(int stage, const float* values, int count, int stream) {
    return per_step_ ? per_step_->issue(stage, values, count, stream) : nullptr;
  }
  std::map<int, int64_t> steps_;
  std::unique_ptr<PerStepValues> per_step_;
};

// sgd or adamw, as the deck says; its state comes from `allocator` (the device's).
// The optimizer's state lives on `device` and its updates run on the device's kernels.
std::unique_ptr<Optimizer> make_optimizer(const OptimizerOptions& config, DeviceContext& device);

}  // namespace wt

#include "exec/nonfinite_guard.hpp"

namespace wt {

NonFiniteGuard::NonFiniteGuard(const std::string& on_nonfinite, const OpsBackend& ops)
    : ops_(ops), stop_(on_nonfinite != "skip") {}

bool NonFiniteGuard::allow_step(int64_t step, int stage, const Tensor& grads) {
  if (ops_.all_finite(grads.data(), grads.numel())) return true;
  const std::string reason = "stage " + std::to_string(stage) + ": " +
                             std::to_string(ops_.count_nonfinite(grads.data(), grads.numel())) +
                             " of " + std::to_string(grads.numel()) +
                             " summed gradient values are NaN or Inf";
  if (stop_)
    throw Diverged("non-finite loss/gradient at step " + std::to_string(step + 1) + " (" + reason +
                   "); failure.on_nonfinite = \"skip\" skips such steps instead");
  if (last_skipped_step_ != step) ++skipped_steps_;
  last_skipped_step_ = step;
  last_reason_ = reason;
  return false;
}

}  // namespace wt

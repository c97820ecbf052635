#include "exec/nonfinite_guard.hpp"

#include <vector>

namespace wt {

namespace {

std::string reason_text(int stage, int64_t nonfinite, int64_t values) {
  return "stage " + std::to_string(stage) + ": " + std::to_string(nonfinite) + " of " +
         std::to_string(values) + " summed gradient values are NaN or Inf";
}

Diverged diverged_at(int64_t step, const std::string& reason) {
  return Diverged("non-finite loss/gradient at step " + std::to_string(step + 1) + " (" + reason +
                  "); failure.on_nonfinite = \"skip\" skips such steps instead");
}

}  // namespace

NonFiniteGuard::NonFiniteGuard(const std::string& on_nonfinite, const OpsBackend& ops,
                               bool deferred)
    : ops_(ops), stop_(on_nonfinite != "skip"), deferred_(deferred) {}

bool NonFiniteGuard::allow_step(int64_t step, int stage, const Tensor& grads) {
  if (ops_.all_finite(grads.data(), grads.numel())) return true;
  const int64_t nonfinite = ops_.count_nonfinite(grads.data(), grads.numel());
  if (stop_ && !deferred_) throw diverged_at(step, reason_text(stage, nonfinite, grads.numel()));
  if (stop_) {
    // Held back until end_step: the peers are still in this step's communication.
    if (pending_.step != step) pending_ = Divergence{step, stage, nonfinite, grads.numel()};
    return false;
  }
  if (last_skipped_step_ != step) ++skipped_steps_;
  last_skipped_step_ = step;
  last_reason_ = reason_text(stage, nonfinite, grads.numel());
  return false;
}

void NonFiniteGuard::end_step(int64_t step, Communicator& comm) {
  if (!stop_ || !deferred_) return;
  const bool mine = pending_.step == step;
  double any = mine ? 1.0 : 0.0;
  comm.allreduce_sum(&any, 1, 0);
  if (any == 0) return;
  // Rare path: every rank learns every rank's finding and names the same one, the lowest stage
  // (lowest rank on a tie), so the message is identical everywhere.
  const int ranks = comm.size();
  std::vector<double> found(size_t(ranks) * 3, 0.0);
  if (mine) {
    double* row = &found[size_t(comm.rank()) * 3];
    row[0] = pending_.stage + 1;
    row[1] = double(pending_.nonfinite);
    row[2] = double(pending_.values);
  }
  comm.allreduce_sum(found.data(), int64_t(found.size()), 0);
  int first = -1;
  for (int r = 0; r < ranks; ++r)
    if (found[size_t(r) * 3] > 0 && (first < 0 || found[size_t(r) * 3] < found[size_t(first) * 3]))
      first = r;
  const double* row = &found[size_t(first) * 3];
  throw diverged_at(step, reason_text(int(row[0]) - 1, int64_t(row[1]), int64_t(row[2])) +
                              " on rank " + std::to_string(first));
}

}  // namespace wt

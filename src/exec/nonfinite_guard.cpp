#include "exec/nonfinite_guard.hpp"

#include <vector>

#include "ops/kernel_args.hpp"

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

NonFiniteGuard::NonFiniteGuard(const std::string& on_nonfinite, Optimizer& optimizer,
                               CachingAllocator& memory, int replicas, int stages, bool deferred)
    : optimizer_(optimizer),
      memory_(memory),
      stop_(on_nonfinite != "skip"),
      deferred_(deferred),
      stages_(stages),
      keys_(size_t(replicas) * size_t(stages)),
      flagged_step_{std::vector<int64_t>(keys_, -1), std::vector<int64_t>(keys_, -1)},
      values_{std::vector<int64_t>(keys_, 0), std::vector<int64_t>(keys_, 0)} {}

float* NonFiniteGuard::flag(int64_t step, int key, int64_t values) {
  std::vector<int64_t>& flagged = flagged_step(step);
  if (flagged.at(size_t(key)) == step)  // the second count would hide the first
    throw std::logic_error("non-finite guard: optimizer key " + std::to_string(key) +
                           " stepped twice in step " + std::to_string(step + 1));
  flagged[size_t(key)] = step;
  this->values(step)[size_t(key)] = values;
  const int64_t at = int64_t(key) * ops::kCountFloats;
  if (readback_) return readback_->device_ptr(counts_at_ + at);
  if (!counts_.defined()) {
    counts_ = Tensor::zeros({count_floats()}, memory_);
    counts_.set_label("the non-finite gradient counts");
  }
  return counts_.device_ptr() + at;
}

void NonFiniteGuard::use_readback(StepReadback& readback) {
  readback_ = &readback;
  counts_at_ = readback.reserve(count_floats(), "the non-finite gradient counts");
}

NonFiniteGuard::Finding NonFiniteGuard::read_counts(int64_t step) {
  Finding first;
  const std::vector<int64_t>& flagged = flagged_step(step);
  bool stepped = false;
  for (int64_t s : flagged) stepped = stepped || s == step;
  if (!stepped) return first;
  std::vector<float> own;  // the step's one copy (shared with the executor's totals if given)
  if (!readback_) own = counts_.to_host();
  const float* staged = readback_ ? readback_->host(counts_at_, step) : own.data();
  for (size_t key = 0; key < keys_; ++key) {
    if (flagged[key] != step) continue;
    const double nonfinite = ops::load_count(&staged[key * size_t(ops::kCountFloats)]);
    if (nonfinite == 0) continue;
    optimizer_.uncount_step(int(key));  // its update did nothing
    const int stage = int(key) % stages_;
    // The lowest stage, the lowest replica on a tie (keys run replica by replica).
    if (first.stage < 0 || stage < first.stage)
      first = Finding{stage, int64_t(nonfinite), values(step)[key]};
  }
  return first;
}

void NonFiniteGuard::end_step(int64_t step, Communicator& comm) {
  conclude(step, comm, read_counts(step), -1);
}

double NonFiniteGuard::vote(int64_t step) {
  voted_ = read_counts(step);
  voted_step_ = step;
  return voted_.stage >= 0 ? 1.0 : 0.0;
}

void NonFiniteGuard::end_step(int64_t step, Communicator& comm, double votes) {
  if (voted_step_ != step)
    throw std::logic_error("NonFiniteGuard::end_step: no vote for step " + std::to_string(step));
  voted_step_ = -1;
  conclude(step, comm, voted_, votes);
}

void NonFiniteGuard::conclude(int64_t step, Communicator& comm, const Finding& mine, double votes) {
  if (!stop_) {
    if (mine.stage < 0) return;
    ++skipped_steps_;
    last_skipped_step_ = step;
    last_reason_ = reason_text(mine.stage, mine.nonfinite, mine.values);
    return;
  }
  if (!deferred_) {  // every rank found the same counts
    if (mine.stage >= 0)
      throw diverged_at(step, reason_text(mine.stage, mine.nonfinite, mine.values));
    return;
  }
  double any = votes;
  if (any < 0) {
    any = mine.stage >= 0 ? 1.0 : 0.0;
    comm.allreduce_sum(&any, 1, 0);
  }
  if (any == 0) return;
  // Rare path: every rank learns every rank's finding and names the same one, the lowest stage
  // (lowest rank on a tie), so the message is identical everywhere.
  const int ranks = comm.size();
  std::vector<double> found(size_t(ranks) * 3, 0.0);
  if (mine.stage >= 0) {
    double* row = &found[size_t(comm.rank()) * 3];
    row[0] = mine.stage + 1;
    row[1] = double(mine.nonfinite);
    row[2] = double(mine.values);
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

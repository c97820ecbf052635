#include "plan/split_choice.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "plan/byte_pairing.hpp"

namespace wt {

namespace {

std::string megabytes(int64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f MB", double(bytes) / 1e6);
  return text;
}

int64_t forward_bytes(const ProfiledJob& job) {
  int64_t bytes = 0;
  for (const NodePhaseMemory& node : job.memory.forward) bytes += node.net;
  return bytes;
}

}  // namespace

std::vector<ProfiledJob> at_batch_scale(const std::vector<ProfiledJob>& jobs, double scale) {
  std::vector<ProfiledJob> out = jobs;
  auto times = [scale](int64_t bytes) { return int64_t(std::llround(double(bytes) * scale)); };
  for (ProfiledJob& job : out) {
    for (auto* phase : {&job.memory.forward, &job.memory.backward})
      for (NodePhaseMemory& node : *phase) node = {times(node.net), times(node.peak)};
    job.peak_bytes = job.resident_bytes + times(job.peak_bytes - job.resident_bytes);
  }
  return out;
}

std::vector<int64_t> split_candidates(const std::vector<ProfiledJob>& jobs) {
  int64_t largest = 0;
  for (const ProfiledJob& job : jobs) largest = std::max(largest, forward_bytes(job));
  std::vector<int64_t> splits;
  for (const double fraction :
       {1.0 / 32, 1.0 / 16, 1.0 / 8, 3.0 / 16, 1.0 / 4, 3.0 / 8, 1.0 / 2, 3.0 / 4, 1.0}) {
    const int64_t split = std::max<int64_t>(1, int64_t(double(largest) * fraction));
    if (splits.empty() || split != splits.back()) splits.push_back(split);
  }
  return splits;
}

double largest_batch_scale(const std::vector<ProfiledJob>& jobs, const RoundOptions& options,
                           int64_t split_bytes) {
  auto fits = [&](double scale) {
    return plan_round(at_batch_scale(jobs, scale), options, split_bytes).memory.peak <=
           options.memory_limit;
  };
  constexpr double kLeast = 1e-3, kMost = 1024;
  if (options.memory_limit <= 0 || !fits(kLeast)) return 0;
  double lo = kLeast, hi = 1;
  while (fits(hi)) {
    lo = hi;
    if (hi >= kMost) return hi;
    hi *= 2;
  }
  while (hi - lo > lo * 1e-3) {
    const double mid = (lo + hi) / 2;
    (fits(mid) ? lo : hi) = mid;
  }
  return lo;
}

SplitChoice choose_split(const std::vector<ProfiledJob>& jobs, const RoundOptions& options) {
  SplitChoice best;
  const bool budget = options.memory_limit > 0;
  for (const int64_t split : split_candidates(jobs)) {
    SplitChoice c;
    c.plan = plan_round(jobs, options, split);
    c.paired = paired_fraction(c.plan.pairing);
    c.batch_scale = budget ? largest_batch_scale(jobs, options, split) : 0;
    ++best.candidates;
    bool better = best.plan.groups.empty();
    if (!better && budget && std::abs(c.batch_scale - best.batch_scale) > 1e-3 * best.batch_scale)
      better = c.batch_scale > best.batch_scale;
    else if (!better && !budget && c.plan.memory.peak != best.plan.memory.peak)
      better = c.plan.memory.peak < best.plan.memory.peak;
    else if (!better && c.paired != best.paired)
      better = c.paired > best.paired;
    else if (!better)
      better = c.plan.pairing.pairs() < best.plan.pairing.pairs();
    if (better) {
      c.candidates = best.candidates;
      best = std::move(c);
    }
  }
  return best;
}

RoundPlan plan_colocated_round(const std::vector<ProfiledJob>& jobs, const RoundOptions& options,
                               int64_t split_bytes, std::string* how) {
  if (options.partition != Partition::Split) {
    *how = options.partition == Partition::Peak ? "two groups per job, cut at its memory peak"
                                                : "two groups per job, forward and backward";
    return plan_round(jobs, options, std::max<int64_t>(1, split_bytes));
  }
  if (split_bytes > 0) {
    *how = "split " + megabytes(split_bytes) + " (colocate.split_bytes)";
    return plan_round(jobs, options, split_bytes);
  }
  SplitChoice choice = choose_split(jobs, options);
  char scale[48];
  std::snprintf(scale, sizeof scale, choice.batch_scale >= 1024 ? "at least %.0f" : "%.2f",
                choice.batch_scale);
  *how = "split " + megabytes(choice.plan.split_bytes) +
         " (split_bytes = 0: chosen by simulating " + std::to_string(choice.candidates) +
         " splits " +
         (options.memory_limit > 0
              ? "against the " + megabytes(options.memory_limit) +
                    " budget; the largest batch predicted to fit is " + scale + "x the decks'"
              : std::string("without a budget: the smallest round peak")) +
         ")";
  return std::move(choice.plan);
}

}  // namespace wt

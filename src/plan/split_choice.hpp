#pragma once
// colocate.split_bytes = 0 (issue 34): the node-group size chosen by simulating the paired round
// at each candidate split against the budget (plan/colocate_plan.hpp plan_round, under the
// round's memory rules) and taking the split at which the largest batch fits. A batch scales each
// job's activations (every node's bytes, measured at the deck's batch) and leaves its resident
// bytes as they are; the largest scale that fits is found by bisection. Ties (the byte pairing
// falls back to one group at a time, so its largest batch is the same at every split) go to the
// split whose round runs the most groups in pairs, then to the fewest pairs (fewer
// synchronisations). Without a budget, the smallest predicted peak wins instead.
#include <cstdint>
#include <string>
#include <vector>

#include "plan/colocate_plan.hpp"

namespace wt {

struct SplitChoice {
  RoundPlan plan;          // at the chosen split
  double batch_scale = 0;  // the largest multiple of the jobs' batches predicted to fit (0: no
                           // budget)
  double paired = 0;       // plan's paired_fraction
  int candidates = 0;
};

// The jobs at `scale` times their batches: every node's bytes scaled, resident bytes as they are.
std::vector<ProfiledJob> at_batch_scale(const std::vector<ProfiledJob>& jobs, double scale);

// The splits tried: 1/32 .. 1 of the largest job's forward allocation.
std::vector<int64_t> split_candidates(const std::vector<ProfiledJob>& jobs);

// The largest multiple of the jobs' batches whose round at split_bytes fits options.memory_limit
// (> 0), to 1/1000; 0 if none does.
double largest_batch_scale(const std::vector<ProfiledJob>& jobs, const RoundOptions& options,
                           int64_t split_bytes);

SplitChoice choose_split(const std::vector<ProfiledJob>& jobs, const RoundOptions& options);

// The round a deck's keys ask for: the peak and turn partitions (no split), the split partition at
// split_bytes, or at the split chosen by choose_split when split_bytes is 0. `how` says which, in
// words, for the log and --show-schedule ("split 24.3 MB (split_bytes = 0: chosen by ...)").
RoundPlan plan_colocated_round(const std::vector<ProfiledJob>& jobs, const RoundOptions& options,
                               int64_t split_bytes, std::string* how);

}  // namespace wt

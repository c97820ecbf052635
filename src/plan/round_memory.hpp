#pragma once
// The memory rules of a co-located round (Waterwave §4.2-4.3), which the pairing
// (plan/byte_pairing.hpp), the split's choice (plan/split_choice.hpp), --simulate and
// --show-schedule all count by, so that what they predict is what the allocator does:
//   - between rounds each job holds its resident bytes (parameters, gradients, optimizer state);
//   - pairs run one after another, memory synchronised at every boundary: what a pair's groups
//     free is usable by the next pair's;
//   - inside a pair, a group's own frees serve its own later allocations (one stream, stream
//     order), but not the other group's (another stream's frees wait for the boundary's
//     synchronisation: CrossStreamReuse::AfterSync). A pair therefore peaks at the bytes in use
//     when it begins plus each group's own transient peak, however the host interleaves them.
#include <cstdint>
#include <vector>

#include "plan/colocate_pairing.hpp"

namespace wt {

struct GroupBytes {
  int64_t net = 0;   // bytes the group leaves allocated (negative: frees)
  int64_t peak = 0;  // its own transient peak above the bytes in use when it begins (>= 0)
  bool allocating = true;
};

struct JobBytes {
  int64_t resident = 0;  // held between steps
  std::vector<GroupBytes> groups;
};

struct RoundMemory {
  int64_t peak = 0;                // the round's peak bytes in use, every job's resident included
  int peak_pair = -1;              // the pair where it is reached
  std::vector<int64_t> pair_peak;  // per pair
};

// Throws std::invalid_argument when the pairing names a job or group that `jobs` lacks.
RoundMemory round_memory(const std::vector<JobBytes>& jobs, const ColocatePairing& pairing);

// The peak of the jobs' groups run one at a time, the jobs in `order` (temporal sharing's round,
// and the fallback the byte pairing keeps open): from the round's start, or from a point where job
// j has run next[j] of its groups with `in_use` bytes in use.
int64_t one_at_a_time_peak(const std::vector<JobBytes>& jobs, const std::vector<int>& order);
int64_t one_at_a_time_peak(const std::vector<JobBytes>& jobs, const std::vector<int>& order,
                           const std::vector<int>& next, int64_t in_use);

}  // namespace wt

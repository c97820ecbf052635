#pragma once
// Co-located jobs' node groups paired by bytes (issue 34), where Algorithm 1
// (plan/colocate_pairing.hpp) pairs them by index. Algorithm 1 puts a job's k-th ANG beside
// another job's k-th DNG whatever their sizes; a CNN allocates most in its first layers and frees
// those last, so the second job's largest allocations landed beside the first job's smallest frees
// and the pairs peaked as unordered sharing does (bench/README.md).
//
// Here pairs are made one at a time, the jobs in Algorithm 1's order: the earliest job with groups
// left (the lead) puts its next group in the pair, and the next job's next group joins it only if
// the round's memory rules (plan/round_memory.hpp) keep the pair within the target and the rest of
// the round could still run one group at a time within it. So a group runs beside the other job's
// groups once those (and the pairs before) free at least what it allocates beyond the target's
// headroom: with a budget, the second job starts beside the first's ANGs as far as the budget
// allows (Algorithm 1's p, in bytes), and never where it would not fit; without one, the target
// is the peak of the jobs one at a time (temporal sharing's), which pairing never raises. A group
// the target cannot take beside anything runs alone (a hole in the other stream).
//
// Streams: ANGs on av, DNGs on dv (as Algorithm 1); two of a kind, the lead's on its kind's
// stream and the other's on the other.
#include <cstdint>
#include <vector>

#include "plan/colocate_pairing.hpp"
#include "plan/round_memory.hpp"

namespace wt {

// target: the bytes the round may reach (the device's budget); 0: the jobs' one-at-a-time peak.
// Jobs without groups throw std::invalid_argument.
ColocatePairing pair_by_bytes(const std::vector<JobBytes>& jobs, int64_t target);

// Groups that run beside another job's group, as a fraction of all groups placed (0: none):
// how much of the round overlaps.
double paired_fraction(const ColocatePairing& pairing);

}  // namespace wt

#pragma once
// What a co-located round runs (Waterwave §4.4): each job's step cut into node groups
// (plan/node_groups.hpp), the groups paired on the two streams by Algorithm 1
// (plan/colocate_pairing.hpp), and where each group ends in the job's instructions, so that a
// driver issues pair after pair and synchronises memory between them (app/training_loop.hpp).
#include <cstddef>
#include <vector>

#include "plan/colocate_pairing.hpp"
#include "plan/node_groups.hpp"
#include "sched/instruction.hpp"

namespace wt {

// For a job's one stream split node by node: the instruction index (exclusive) where each group
// ends. A group ends after its last node's pass and the instructions that follow it before the
// next pass (an AllReduce after a backward pass; the Step, with the last group); the first group
// starts with the instructions before the first pass (the LoadBatch). Throws std::invalid_argument
// when the stream's passes do not run the groups' nodes in order.
std::vector<size_t> group_ends(const std::vector<Instruction>& stream,
                               const std::vector<NodeGroup>& groups);

struct ColocatedJob {
  std::vector<NodeGroup> groups;
  std::vector<size_t> ends;  // group_ends of its stream
  int64_t peak_bytes = 0;      // its solo peak (Algorithm 1's p)
  int64_t resident_bytes = 0;  // what it holds between steps
};

// Algorithm 1 over the jobs' groups.
ColocatePairing pair_jobs(const std::vector<ColocatedJob>& jobs, int64_t memory_limit,
                          int64_t split_bytes);

}  // namespace wt

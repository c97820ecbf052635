#pragma once
// What a co-located round runs (Waterwave §4.4): each job's step cut into node groups
// (plan/node_groups.hpp), the groups paired on the two streams by bytes (plan/byte_pairing.hpp)
// or by Algorithm 1's index (plan/colocate_pairing.hpp), the round's memory as its rules predict
// it (plan/round_memory.hpp), and where each group ends in the job's instructions, so that a
// driver issues pair after pair and synchronises memory between them (app/paired_rounds.hpp).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "plan/colocate_pairing.hpp"
#include "plan/node_groups.hpp"
#include "plan/round_memory.hpp"
#include "sched/instruction.hpp"

namespace wt {

// For a job's one stream split node by node: the instruction index (exclusive) where each group
// ends. A group ends after its last node's pass and the instructions that follow it before the
// next pass (an AllReduce after a backward pass; the Step, with the last group); the first group
// starts with the instructions before the first pass (the LoadBatch). Throws std::invalid_argument
// when the stream's passes do not run the groups' passes in order.
std::vector<size_t> group_ends(const std::vector<Instruction>& stream,
                               const std::vector<NodeGroup>& groups);

// A job as its solo profiling step saw it.
struct ProfiledJob {
  NodeMemoryProfile memory;
  int64_t peak_bytes = 0;      // its solo peak, resident bytes included (Algorithm 1's p)
  int64_t resident_bytes = 0;  // what it holds between steps
};

enum class Pairing { Bytes, Index };
// "bytes", "index" (the deck's colocate.pairing); throws std::invalid_argument otherwise.
Pairing pairing_named(const std::string& name);

struct RoundOptions {
  int64_t memory_limit = 0;  // the device's budget; 0: none
  Partition partition = Partition::Split;
  Pairing pairing = Pairing::Bytes;
};

struct RoundPlan {
  int64_t split_bytes = 0;
  std::vector<std::vector<NodeGroup>> groups;  // per job
  ColocatePairing pairing;
  RoundMemory memory;  // as the round's rules predict it
};

// What the byte pairing may fill: the budget less the largest allocation any job's node makes
// (its transient peak). The rules count bytes in use, the budget bounds bytes reserved, and
// blocks the cache split for other sizes cannot all go back to the system: a round that leaves one
// node's room fits where one that fills the budget to the byte can fail (mlp at batch 8192 did).
// 0 without a budget; never below 1 (nothing pairs; the jobs run one group at a time).
int64_t pairing_target(const std::vector<ProfiledJob>& jobs, int64_t memory_limit);

// The jobs' groups at split_bytes (> 0), paired, and the round's predicted memory.
RoundPlan plan_round(const std::vector<ProfiledJob>& jobs, const RoundOptions& options,
                     int64_t split_bytes);

// The jobs' groups as the memory rules count them.
std::vector<JobBytes> job_bytes(const std::vector<ProfiledJob>& jobs,
                                const std::vector<std::vector<NodeGroup>>& groups);

}  // namespace wt

#pragma once
// Before co-located jobs train (issue 34): a node whose output alone, at its job's batch, is more
// than the budget leaves beside every job's resident bytes (parameters, gradients and optimizer
// state) cannot run under any pairing of node groups, however fine the split. Such a deck exits 3
// before the first step, naming the node, its bytes and the budget, instead of failing inside a
// step with the allocator's message.
#include <vector>

#include "deck/run_config.hpp"

namespace wt {

class Job;

// decks[k] is jobs[k]'s deck; memory_limit 0 checks nothing. Throws OutOfMemory (exit 3).
void check_nodes_fit_beside(const std::vector<RunConfig>& decks, const std::vector<Job*>& jobs,
                            int64_t memory_limit, int ranks);

}  // namespace wt

#pragma once
// Runs every rank's streams of a program abstractly, without math: only the order in which
// instructions can be issued and communication can complete under a library's rules. Each rank
// visits its streams as the executor does (stream_visit_order) and runs each until it blocks.
#include <string>

#include "sched/comm_rules.hpp"
#include "sched/instruction.hpp"

namespace wt {

// "" when every stream of every rank runs to its end; otherwise the streams that are stuck and
// the instruction each is stuck at ("[rank 0 stream 1 at wait event=3] ...").
std::string find_stuck_streams(const Program& program, CommRules rules);

}  // namespace wt

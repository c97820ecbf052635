#pragma once
// Which instructions must have been issued for an event to complete: the completing instruction
// itself plus its partners — every member's matching collective on the group, or the other end of
// a point-to-point message (matched in order per sender, receiver and tag under MPI's rules, per
// sender and receiver under NCCL's). Shared by the validator's deadlock check and the cycle table.
#include <map>
#include <tuple>
#include <utility>
#include <vector>

#include "sched/comm_rules.hpp"
#include "sched/instruction.hpp"

namespace wt {

struct InstructionRef {
  int rank = 0, stream = 0;
  size_t index = 0;
};

// (rank, event) -> the instructions it waits for. Events with an unmatched partner map to the
// instructions that exist (the validator reports the mismatch separately).
std::map<std::pair<int, int>, std::vector<InstructionRef>> event_dependencies(
    const Program& program, CommRules rules = CommRules::Mpi);

// The point-to-point channel a message travels on: (sender, receiver, tag), tag 0 under NCCL.
std::tuple<int, int, int> message_channel(int rank, const Instruction& ins, CommRules rules);

}  // namespace wt

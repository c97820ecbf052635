#pragma once
// Which instructions must have been issued for an event to complete: the completing instruction
// itself plus its partners — every member's matching collective on the group, or the other end of
// a point-to-point message (matched in order per sender, receiver and tag, as MPI does). Shared by
// the validator's deadlock check and the cycle table.
#include <map>
#include <utility>
#include <vector>

#include "sched/instruction.hpp"

namespace wt {

struct InstructionRef {
  int rank = 0, stream = 0;
  size_t index = 0;
};

// (rank, event) -> the instructions it waits for. Events with an unmatched partner map to the
// instructions that exist (the validator reports the mismatch separately).
std::map<std::pair<int, int>, std::vector<InstructionRef>> event_dependencies(
    const Program& program);

}  // namespace wt

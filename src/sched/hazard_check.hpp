#pragma once
// Data hazards within one rank's program for one step: two instructions that touch the same state
// (the opcode traits' reads and writes, refined to the slot tensor, the (replica, stage) and the
// node or row range each really touches), one of them writing, with nothing ordering them. An
// asynchronous communication touches its state from its issue until a Wait on its event, so an
// access after the issue but not after such a Wait is a hazard too. Order comes from stream order,
// Record/Wait and communication-event/Wait edges. The step's end synchronises everything, so only
// hazards within one step count.
#include <string>

#include "sched/instruction.hpp"

namespace wt {

// "" when no rank has a hazard; otherwise the first one found, naming both instructions and their
// streams ("rank 0: step stage=0 (stream 0) reads stage 0's gradients ... that allreduce ...
// (stream 0) may still be writing: wait on event 1 first"). Assumes each rank's streams can run
// to their end (validate_program checks for deadlock first).
std::string find_hazard(const Program& program, int stage_count);

}  // namespace wt

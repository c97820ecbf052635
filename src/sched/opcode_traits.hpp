#pragma once
// One table that says, for every opcode, what it is: its names, whether it computes, moves data
// between ranks or only orders streams, which fields it needs, and what state it reads and writes.
// The validator, the event-dependency analysis, the simulator, the printer and the executor all
// ask this table, so a new opcode touches the table, its generator and its executor case.
#include <cstdint>

#include "sched/instruction.hpp"

namespace wt {

// What an instruction occupies: the rank's compute engine, its link, or nothing (ordering only).
enum class OpClass { Compute, Communication, Ordering };

// How a communication instruction is matched with other ranks' instructions.
enum class CommPattern {
  None,        // not communication
  Collective,  // every member of `group` issues the same sequence (AllReduce, Broadcast, Reduce)
  Send,        // matched in order with the peer's Receive on the same channel
  Receive,
};

// State an instruction touches (bit flags). Stage state is the (replica, stage) named by it.
enum StateBits : uint32_t {
  kSlotData = 1u << 0,        // the slot's input, labels, activations or gradients
  kStageValues = 1u << 1,     // the stage's parameters and buffers
  kStageGradients = 1u << 2,  // the stage's parameter gradients
  kOptimizerState = 1u << 3,  // the stage's optimizer moments
  kKeptGradient = 1u << 4,    // a tick-tock wave's local gradient copy
};

struct OpcodeTraits {
  OpCode op;
  const char* name;       // short name: programs and --show-schedule print it
  const char* enum_name;  // as spelled in the source: traces record it
  OpClass op_class;
  CommPattern comm;
  bool completes_event;  // completes `event` (Record, every communication)
  bool waits_event;      // blocks its stream until `event` has completed (Wait)
  bool needs_stage;      // `stage` must name a stage of the model
  bool needs_slot;       // `slot` must name a batch buffer of the rank
  uint32_t reads;        // StateBits
  uint32_t writes;       // StateBits
};

// The row for `op`; every OpCode has exactly one (checked at compile time).
const OpcodeTraits& opcode_traits(OpCode op);

inline bool is_communication(OpCode op) {
  return opcode_traits(op).op_class == OpClass::Communication;
}
inline bool is_collective(OpCode op) { return opcode_traits(op).comm == CommPattern::Collective; }
inline bool is_send(OpCode op) { return opcode_traits(op).comm == CommPattern::Send; }
inline bool is_receive(OpCode op) { return opcode_traits(op).comm == CommPattern::Receive; }
inline bool is_point_to_point(OpCode op) { return is_send(op) || is_receive(op); }
inline bool is_rows(OpCode op) {
  return op == OpCode::SendRows || op == OpCode::RecvRows || op == OpCode::CopyRows;
}
// Whether a transfer carries a gradient (backward) rather than an activation (forward).
inline bool carries_gradient(const Instruction& ins) {
  return is_rows(ins.op) ? ins.gradient
                         : ins.op == OpCode::SendGradient || ins.op == OpCode::RecvGradient;
}

}  // namespace wt

#include "sched/opcode_traits.hpp"

#include <array>

namespace wt {

namespace {

constexpr uint32_t kNone = 0;
constexpr uint32_t kSlot = kSlotData, kValues = kStageValues, kGrads = kStageGradients;

// Columns: op, name, enum name, class, matching, completes event, waits event, needs stage,
// needs slot, reads, writes. Rows in OpCode order (checked below).
constexpr std::array<OpcodeTraits, kOpCodeCount> kTable{{
    {OpCode::LoadBatch, "load", "LoadBatch", OpClass::Compute, CommPattern::None, false, false,
     false, true, kNone, kSlot},
    {OpCode::Forward, "fwd", "Forward", OpClass::Compute, CommPattern::None, false, false, true,
     true, kValues | kSlot, kSlot},
    {OpCode::Backward, "bwd", "Backward", OpClass::Compute, CommPattern::None, false, false, true,
     true, kValues | kSlot, kGrads | kSlot},
    {OpCode::AllReduce, "allreduce", "AllReduce", OpClass::Communication, CommPattern::Collective,
     true, false, true, false, kGrads, kGrads},
    {OpCode::Wait, "wait", "Wait", OpClass::Ordering, CommPattern::None, false, true, false, false,
     kNone, kNone},
    {OpCode::Step, "step", "Step", OpClass::Compute, CommPattern::None, false, false, true, false,
     kGrads | kValues | kOptimizerState, kValues | kOptimizerState | kGrads},
    {OpCode::SendActivation, "send_act", "SendActivation", OpClass::Communication,
     CommPattern::Send, true, false, true, true, kSlot, kNone},
    {OpCode::RecvActivation, "recv_act", "RecvActivation", OpClass::Communication,
     CommPattern::Receive, true, false, true, true, kNone, kSlot},
    {OpCode::SendGradient, "send_grad", "SendGradient", OpClass::Communication, CommPattern::Send,
     true, false, true, true, kSlot, kSlot},
    {OpCode::RecvGradient, "recv_grad", "RecvGradient", OpClass::Communication,
     CommPattern::Receive, true, false, true, true, kNone, kSlot},
    {OpCode::Broadcast, "bcast", "Broadcast", OpClass::Communication, CommPattern::Collective, true,
     false, true, false, kValues, kValues},
    {OpCode::Reduce, "reduce", "Reduce", OpClass::Communication, CommPattern::Collective, true,
     false, true, false, kGrads, kGrads},
    {OpCode::Record, "record", "Record", OpClass::Ordering, CommPattern::None, true, false, false,
     false, kNone, kNone},
    {OpCode::KeepGradient, "keep_grad", "KeepGradient", OpClass::Compute, CommPattern::None, false,
     false, true, false, kGrads, kKeptGradient},
    {OpCode::AddKeptGradient, "add_kept_grad", "AddKeptGradient", OpClass::Compute,
     CommPattern::None, false, false, true, false, kKeptGradient | kGrads, kGrads},
    {OpCode::SendRows, "send_rows", "SendRows", OpClass::Communication, CommPattern::Send, true,
     false, true, true, kSlot, kNone},
    {OpCode::RecvRows, "recv_rows", "RecvRows", OpClass::Communication, CommPattern::Receive, true,
     false, true, true, kNone, kSlot},
    {OpCode::CopyRows, "copy_rows", "CopyRows", OpClass::Compute, CommPattern::None, false, false,
     true, true, kSlot, kSlot},
}};

constexpr bool rows_in_opcode_order() {
  for (int i = 0; i < kOpCodeCount; ++i)
    if (static_cast<int>(kTable[i].op) != i) return false;
  return true;
}
static_assert(rows_in_opcode_order(), "opcode_traits: one row per OpCode, in OpCode order");

}  // namespace

const OpcodeTraits& opcode_traits(OpCode op) { return kTable[static_cast<size_t>(op)]; }

}  // namespace wt

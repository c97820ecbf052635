#include "sched/instruction.hpp"

namespace wt {

const char* opcode_name(OpCode op) {
  switch (op) {
    case OpCode::LoadBatch:
      return "load";
    case OpCode::Forward:
      return "fwd";
    case OpCode::Backward:
      return "bwd";
    case OpCode::AllReduce:
      return "allreduce";
    case OpCode::Wait:
      return "wait";
    case OpCode::Step:
      return "step";
  }
  return "?";
}

const char* opcode_enum_name(OpCode op) {
  switch (op) {
    case OpCode::LoadBatch:
      return "LoadBatch";
    case OpCode::Forward:
      return "Forward";
    case OpCode::Backward:
      return "Backward";
    case OpCode::AllReduce:
      return "AllReduce";
    case OpCode::Wait:
      return "Wait";
    case OpCode::Step:
      return "Step";
  }
  return "?";
}

std::string Instruction::str() const {
  std::string s = opcode_name(op);
  auto add = [&](const char* k, int v) { s += std::string(" ") + k + "=" + std::to_string(v); };
  switch (op) {
    case OpCode::LoadBatch:
      add("slot", slot);
      add("batch", batch);
      s += " part=" + std::to_string(part) + "/" + std::to_string(parts);
      break;
    case OpCode::Forward:
      add("stage", stage);
      add("slot", slot);
      break;
    case OpCode::Backward:
      add("stage", stage);
      add("slot", slot);
      s += " nodes=[" + std::to_string(node_begin) + "," + std::to_string(node_end) + ")";
      break;
    case OpCode::AllReduce:
      add("stage", stage);
      s += " nodes=[" + std::to_string(node_begin) + "," + std::to_string(node_end) + ")";
      add("group", group);
      add("event", event);
      break;
    case OpCode::Wait:
      add("event", event);
      break;
    case OpCode::Step:
      add("stage", stage);
      break;
  }
  return s;
}

}  // namespace wt

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
    case OpCode::SendActivation:
      return "send_act";
    case OpCode::RecvActivation:
      return "recv_act";
    case OpCode::SendGradient:
      return "send_grad";
    case OpCode::RecvGradient:
      return "recv_grad";
    case OpCode::Broadcast:
      return "bcast";
    case OpCode::Reduce:
      return "reduce";
    case OpCode::Record:
      return "record";
    case OpCode::KeepGradient:
      return "keep_grad";
    case OpCode::AddKeptGradient:
      return "add_kept_grad";
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
    case OpCode::SendActivation:
      return "SendActivation";
    case OpCode::RecvActivation:
      return "RecvActivation";
    case OpCode::SendGradient:
      return "SendGradient";
    case OpCode::RecvGradient:
      return "RecvGradient";
    case OpCode::Broadcast:
      return "Broadcast";
    case OpCode::Reduce:
      return "Reduce";
    case OpCode::Record:
      return "Record";
    case OpCode::KeepGradient:
      return "KeepGradient";
    case OpCode::AddKeptGradient:
      return "AddKeptGradient";
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
      if (labels_only) s += " labels";
      break;
    case OpCode::Forward:
    case OpCode::Backward:
      add("stage", stage);
      add("slot", slot);
      if (batch >= 0) add("batch", batch);
      if (node_begin >= 0)
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
    case OpCode::SendActivation:
    case OpCode::RecvActivation:
    case OpCode::SendGradient:
    case OpCode::RecvGradient:
      add("stage", stage);
      add("slot", slot);
      add("batch", batch);
      s += " part=" + std::to_string(part) + "/" + std::to_string(parts);
      add(op == OpCode::SendActivation || op == OpCode::SendGradient ? "to" : "from", peer);
      add("bytes", static_cast<int>(bytes));
      add("event", event);
      break;
    case OpCode::Broadcast:
    case OpCode::Reduce:
      add("stage", stage);
      add("root", root);
      add("group", group);
      add("event", event);
      break;
    case OpCode::Record:
      add("event", event);
      break;
    case OpCode::KeepGradient:
      add("stage", stage);
      break;
    case OpCode::AddKeptGradient:
      add("stage", stage);
      add("from_replica", from_replica);
      break;
  }
  if (replica != 0) add("replica", replica);
  return s;
}

}  // namespace wt

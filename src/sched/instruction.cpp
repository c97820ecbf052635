#include "sched/instruction.hpp"

#include <algorithm>
#include <numeric>

#include "sched/opcode_traits.hpp"

namespace wt {

const char* opcode_name(OpCode op) { return opcode_traits(op).name; }

const char* opcode_enum_name(OpCode op) { return opcode_traits(op).enum_name; }

namespace {

// " stage=1 slot=0 act rows=32+32/64 samples=[32,64) from=1 bytes=... event=0" (burst's rows).
std::string rows_text(const Instruction& i) {
  std::string s = " stage=" + std::to_string(i.stage) + " slot=" + std::to_string(i.slot);
  s += i.gradient ? " grad" : " act";
  s += " rows=" + std::to_string(i.op == OpCode::CopyRows ? i.to_row : i.row_begin) + "+" +
       std::to_string(i.rows) + "/" + std::to_string(i.total_rows);
  s += " samples=[" + std::to_string(i.sample_begin) + "," +
       std::to_string(i.sample_begin + i.rows) + ")";
  if (i.op == OpCode::CopyRows) return s + " from_row=" + std::to_string(i.row_begin);
  s += (i.op == OpCode::SendRows ? " to=" : " from=") + std::to_string(i.peer);
  return s + " bytes=" + std::to_string(i.bytes) + " event=" + std::to_string(i.event);
}

}  // namespace

std::string Instruction::str() const {
  std::string s = opcode_name(op);
  auto add = [&](const char* k, int v) { s += std::string(" ") + k + "=" + std::to_string(v); };
  switch (op) {
    case OpCode::LoadBatch:
      add("slot", slot);
      add("batch", batch);
      s += " part=" + std::to_string(part) + "/" + std::to_string(parts);
      if (labels_only) s += " labels";
      if (rows > 0) s += " samples=" + std::to_string(sample_begin) + "+" + std::to_string(rows);
      break;
    case OpCode::Forward:
    case OpCode::Backward:
      add("stage", stage);
      add("slot", slot);
      if (batch >= 0) add("batch", batch);
      if (node_begin >= 0)
        s += " nodes=[" + std::to_string(node_begin) + "," + std::to_string(node_end) + ")";
      if (backward_part != BackwardPart::Whole)
        s += std::string(" half=") + backward_part_name(backward_part);
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
    case OpCode::SendRows:
    case OpCode::RecvRows:
    case OpCode::CopyRows:
      s += rows_text(*this);
      break;
  }
  if (replica != 0) add("replica", replica);
  if (job != 0) add("job", job);
  return s;
}

std::vector<int> stream_visit_order(const RankProgram& rank) {
  std::vector<int> order(rank.streams.size());
  std::iota(order.begin(), order.end(), 0);
  auto priority = [&](int s) { return size_t(s) < rank.priority.size() ? rank.priority[s] : 0; };
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return priority(a) > priority(b); });
  return order;
}

}  // namespace wt

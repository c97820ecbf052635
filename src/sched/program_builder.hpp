#pragma once
// Small constructors for instructions, shared by the schedule generators, so a generator reads as
// its schedule table and not as field assignments.
#include <vector>

#include "sched/instruction.hpp"

namespace wt::build {

inline Instruction load(int slot, int batch, int part, int parts, bool labels_only = false) {
  Instruction i{OpCode::LoadBatch};
  i.slot = slot;
  i.batch = batch;
  i.part = part;
  i.parts = parts;
  i.labels_only = labels_only;
  return i;
}

// part/parts only label the instruction (the executor computes on whatever the slot holds).
inline Instruction compute(OpCode op, int stage, int slot, int batch, int part = 0, int parts = 1) {
  Instruction i{op};
  i.stage = stage;
  i.slot = slot;
  i.batch = batch;
  i.part = part;
  i.parts = parts;
  return i;
}

// Send/Recv of the activation or gradient at a stage boundary. Tags only need to tell apart the
// messages between one pair of ranks: (slot, boundary, activation/gradient) does.
inline Instruction transfer(OpCode op, int stage, int stages, int slot, int batch, int part,
                            int parts, int peer, int64_t bytes, int event) {
  Instruction i{op};
  i.stage = stage;
  i.slot = slot;
  i.batch = batch;
  i.part = part;
  i.parts = parts;
  i.peer = peer;
  i.bytes = bytes;
  i.event = event;
  const bool gradient = op == OpCode::SendGradient || op == OpCode::RecvGradient;
  // Both ends name the boundary by the stage after it.
  const int boundary =
      op == OpCode::SendActivation || op == OpCode::RecvGradient ? stage + 1 : stage;
  i.tag = (slot * stages + boundary) * 2 + (gradient ? 1 : 0);
  return i;
}

inline Instruction collective(OpCode op, int stage, int root, int group, int event) {
  Instruction i{op};
  i.stage = stage;
  i.root = root;
  i.group = group;
  i.event = event;
  return i;
}

inline Instruction wait(int event) {
  Instruction i{OpCode::Wait};
  i.event = event;
  return i;
}

inline Instruction step(int stage) {
  Instruction i{OpCode::Step};
  i.stage = stage;
  return i;
}

inline std::vector<int> world_group(int world) {
  std::vector<int> g(world);
  for (int r = 0; r < world; ++r) g[r] = r;
  return g;
}

}  // namespace wt::build

#pragma once
// Schedules are data: a generator emits, per rank and per stream, a list of these instructions
// for one training step; the executor runs them and the simulator prices them. Nothing here
// touches a tensor.
#include <string>
#include <vector>

namespace wt {

enum class OpCode {
  LoadBatch,  // slot <- part `part` of `parts` of global batch `batch` of this step
  Forward,    // stage on slot (the last stage includes the loss)
  Backward,   // stage on slot, nodes [node_begin, node_end) in reverse order
  AllReduce,  // start summing the gradients of nodes [node_begin, node_end) of stage over group;
              // completes `event`
  Wait,       // block this stream until `event` has completed
  Step,       // optimizer step on stage, then zero its gradients
};

const char* opcode_name(OpCode op);
// The enumerator as spelled in the source ("LoadBatch", "AllReduce"): the name traces record.
const char* opcode_enum_name(OpCode op);

struct Instruction {
  OpCode op;
  int stage = -1;
  int slot = -1;   // which in-flight batch buffer on this rank
  int batch = -1;  // which global batch of the step (LoadBatch)
  int part = 0;    // LoadBatch: this rank's part of the global batch ...
  int parts = 1;   // ... out of this many
  int wave = 0;    // for waves/tick-tock traces
  int node_begin = -1;
  int node_end = -1;
  int group = 0;  // communicator group id (0 = world)
  int event = -1;
  std::string str() const;
};

// One rank's instructions for one step, per stream. On a CPU the executor interleaves streams in
// dependency order on one thread; on a GPU each stream maps to a CUDA stream.
struct RankProgram {
  std::vector<std::vector<Instruction>> streams;
};

struct Program {
  std::string schedule;
  int world_size = 1;
  int slots = 1;                         // batch buffers each rank needs
  int events = 0;                        // event ids used: [0, events)
  int global_batches = 1;                // global batches consumed per step
  std::vector<std::vector<int>> groups;  // groups[0] is the world; ids match Instruction::group
  std::vector<RankProgram> ranks;
};

}  // namespace wt

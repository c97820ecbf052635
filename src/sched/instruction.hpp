#pragma once
// Schedules are data: a generator emits, per rank and per stream, a list of these instructions
// for one training step; the executor runs them and the simulator prices them. Nothing here
// touches a tensor.
#include <cstdint>
#include <string>
#include <vector>

#include "model/backward_part.hpp"

namespace wt {

enum class OpCode {
  LoadBatch,  // slot <- part `part` of `parts` of global batch `batch` of this step
  Forward,    // stage on slot (the last stage includes the loss); nodes [node_begin, node_end)
              // in order if given
  Backward,   // stage on slot, nodes [node_begin, node_end) in reverse order if given; or one
              // node's half (backward_part)
  AllReduce,  // start summing the gradients of nodes [node_begin, node_end) of stage over group;
              // completes `event`
  Wait,       // block this stream until `event` has completed
  Step,       // optimizer step on stage, then zero its gradients
  // Model parallelism: point-to-point between the ranks running neighbouring stages of one batch.
  // Each completes `event`; a stream that needs the data Waits on it.
  SendActivation,  // send the output of stage's last node in slot to `peer`
  RecvActivation,  // receive the input of stage (output of node node_begin-1) into slot from `peer`
  SendGradient,    // send the gradient w.r.t. stage's input in slot to `peer`, then drop both
  RecvGradient,    // receive the gradient w.r.t. stage's output into slot from `peer`
  // Stage weights kept by an owner rank (`root`): copy them to every rank of `group`, or sum every
  // rank's gradients into the owner's (the others' gradients are zero afterwards).
  Broadcast,  // stage's parameters and buffers from root to the group; completes `event`
  Reduce,     // stage's gradients summed onto root over group; completes `event`
  // Several model replicas on one rank (tick-tock waves): every compute, gradient and step
  // instruction names its replica.
  Record,        // completes `event` at once: orders another stream of this rank after this point
  KeepGradient,  // keep a copy of replica's stage gradient as that wave's local gradient
  AddKeptGradient,  // add the local gradient kept by replica `from_replica` to replica's stage
                    // gradient; before anything was kept (the first iteration), double it instead
  // Burst parallelism: a stage (segment) runs on ranks 0..g-1, each holding its own rows of the
  // batch; at a boundary rows move from one layout to the next (sched/burst_layout.hpp). The
  // boundary tensor is the output of node stage.node_begin - 1 (its gradient when `gradient`):
  // forward, from the previous stage's rows into the stage's re-laid input; backward, from the
  // gradient of that input back into the previous stage's rows.
  SendRows,  // send rows [row_begin, row_begin + rows) of this rank's side; completes `event`
  RecvRows,  // receive them into rows [row_begin, ...) of a tensor of total_rows rows
  CopyRows,  // local: rows [row_begin, ...) into rows [to_row, ...) of a tensor of total_rows
  // A new opcode goes here, last: update kOpCodeCount and add its row in opcode_traits.cpp.
};
inline constexpr int kOpCodeCount = static_cast<int>(OpCode::CopyRows) + 1;

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
  int peer = -1;      // Send*/Recv*: the other world rank
  int tag = 0;        // Send*/Recv*: matches a send with its receive between one pair of ranks
  int root = -1;      // Broadcast/Reduce: the stage's owner (world rank)
  int64_t bytes = 0;  // Send*/Recv*: message size, checked statically and at run time
  bool labels_only = false;
  int job = 0;            // which of the rank's jobs (decks) it belongs to: [0, Program::jobs)
  int replica = 0;        // which model replica on this rank
  int from_replica = -1;  // AddKeptGradient: whose kept gradient
  // Rows of a batch (SendRows, RecvRows, CopyRows; LoadBatch with labels_only when rows > 0:
  // the labels of global batch positions [sample_begin, sample_begin + rows)).
  bool gradient = false;     // the boundary's gradient (backward), not its activation
  int64_t row_begin = 0;     // first row on this rank's side (CopyRows: the source's)
  int64_t to_row = 0;        // CopyRows: first row in the destination
  int64_t rows = 0;          // how many
  int64_t total_rows = 0;    // rows of the receiving tensor (allocated by its first piece)
  int64_t sample_begin = 0;  // the global batch position of the first row
  // Backward of one node: whole, or one of its halves (split_backward, sched/job_placement.hpp).
  BackwardPart backward_part = BackwardPart::Whole;
  std::string str() const;
};

// One rank's instructions for one step, per stream. On a CPU the executor interleaves streams in
// dependency order on one thread; on a GPU each stream maps to a CUDA stream.
struct RankProgram {
  std::vector<std::vector<Instruction>> streams;
  // Per stream; empty means all 0. A larger number is more urgent: the host executor visits such
  // streams first, and a GPU backend maps it to the stream's priority (cudaStreamCreateWithPriority
  // counts the other way round).
  std::vector<int> priority = {};
};

// The order in which the executor visits a rank's streams: higher priority first, then by index.
std::vector<int> stream_visit_order(const RankProgram& rank);

struct Program {
  std::string schedule;
  int world_size = 1;
  int slots = 1;                         // batch buffers each rank needs
  int events = 0;                        // event ids used: [0, events)
  int global_batches = 1;                // global batches consumed per step
  int replicas = 1;                      // model replicas each rank holds
  int jobs = 1;                          // jobs whose instructions the program holds
  std::vector<std::vector<int>> groups;  // groups[0] is the world; ids match Instruction::group
  std::vector<RankProgram> ranks;
};

}  // namespace wt

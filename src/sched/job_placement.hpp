#pragma once
// Where a co-located job's program runs on the device it shares (Waterwave §4: jobs on their own
// streams, interleaved inside a step). Program transforms, pure data like the generators:
//   on_stream: a one-stream program moved to device stream `stream` (the streams before it stay
//     empty), so jobs placed on different streams never share one;
//   per_node: every Forward and Backward split into one instruction per node (Forward upwards,
//     Backward downwards), so a driver can interleave jobs node by node;
//   split_backward: a one-node Backward of a node marked in `splits` made two, its input's
//     gradient then its parameters' (model/backward_part.hpp), so the driver's grain is finer
//     still where one pass is long (a convolution's).
// The result passes validate_program whenever the input does (each job's program stays its own:
// the jobs' interleaving is the driver's, exec/colocated_step.hpp).
#include <vector>

#include "sched/instruction.hpp"
#include "sched/schedule_registry.hpp"

namespace wt {

// Throws std::invalid_argument unless every rank's program has one stream.
Program on_stream(Program program, int stream);

// stages: each stage's node range (ScheduleInput::stages).
Program per_node(Program program, const std::vector<StageInfo>& stages);

// splits: per node, whether its Backward runs in halves (a layer that splits_backward, whose
// input's gradient is computed: otherwise the first half would do nothing).
Program split_backward(Program program, const std::vector<char>& splits);

// A Forward or Backward of one node: what per_node makes of every pass.
inline bool is_node_pass(const Instruction& ins) {
  return (ins.op == OpCode::Forward || ins.op == OpCode::Backward) &&
         ins.node_end == ins.node_begin + 1;
}

}  // namespace wt

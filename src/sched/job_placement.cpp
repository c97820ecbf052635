#include "sched/job_placement.hpp"

#include <stdexcept>
#include <string>

namespace wt {

Program on_stream(Program program, int stream) {
  if (stream < 0) throw std::invalid_argument("on_stream: negative stream");
  for (RankProgram& rank : program.ranks) {
    if (rank.streams.size() != 1)
      throw std::invalid_argument("a co-located job's schedule must run on one stream; '" +
                                  program.schedule + "' uses " +
                                  std::to_string(rank.streams.size()));
    std::vector<std::vector<Instruction>> streams(size_t(stream) + 1);
    streams[size_t(stream)] = std::move(rank.streams[0]);
    rank.streams = std::move(streams);
    if (!rank.priority.empty()) {
      std::vector<int> priority(size_t(stream) + 1, 0);
      priority[size_t(stream)] = rank.priority[0];
      rank.priority = priority;
    }
  }
  return program;
}

Program per_node(Program program, const std::vector<StageInfo>& stages) {
  for (RankProgram& rank : program.ranks)
    for (auto& stream : rank.streams) {
      std::vector<Instruction> split;
      for (const Instruction& ins : stream) {
        if (ins.op != OpCode::Forward && ins.op != OpCode::Backward) {
          split.push_back(ins);
          continue;
        }
        const StageInfo& stage = stages.at(size_t(ins.stage));
        const int begin = ins.node_begin < 0 ? stage.node_begin : ins.node_begin;
        const int end = ins.node_end < 0 ? stage.node_end : ins.node_end;
        for (int k = 0; k < end - begin; ++k) {
          Instruction one = ins;
          one.node_begin = ins.op == OpCode::Forward ? begin + k : end - 1 - k;
          one.node_end = one.node_begin + 1;
          split.push_back(one);
        }
      }
      stream = std::move(split);
    }
  return program;
}

Program split_backward(Program program, const std::vector<char>& splits) {
  for (RankProgram& rank : program.ranks)
    for (auto& stream : rank.streams) {
      std::vector<Instruction> split;
      for (const Instruction& ins : stream) {
        const bool halves = ins.op == OpCode::Backward && is_node_pass(ins) &&
                            ins.backward_part == BackwardPart::Whole &&
                            size_t(ins.node_begin) < splits.size() &&
                            splits[size_t(ins.node_begin)];
        if (!halves) {
          split.push_back(ins);
          continue;
        }
        Instruction half = ins;
        half.backward_part = BackwardPart::InputGradient;
        split.push_back(half);
        half.backward_part = BackwardPart::ParamGradient;
        split.push_back(half);
      }
      stream = std::move(split);
    }
  return program;
}

}  // namespace wt

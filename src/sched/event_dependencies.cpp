#include "sched/event_dependencies.hpp"

#include <tuple>

namespace wt {

std::map<std::pair<int, int>, std::vector<InstructionRef>> event_dependencies(
    const Program& program) {
  using Channel = std::tuple<int, int, int>;
  std::map<std::pair<int, int>, std::vector<InstructionRef>> collectives;  // (rank, group)
  std::map<Channel, std::vector<InstructionRef>> sends, recvs;
  const auto& ranks = program.ranks;
  auto at = [&](const InstructionRef& r) -> const Instruction& {
    return ranks[r.rank].streams[r.stream][r.index];
  };
  for (int r = 0; r < static_cast<int>(ranks.size()); ++r)
    for (int s = 0; s < static_cast<int>(ranks[r].streams.size()); ++s)
      for (size_t i = 0; i < ranks[r].streams[s].size(); ++i) {
        const Instruction& ins = ranks[r].streams[s][i];
        const InstructionRef ref{r, s, i};
        switch (ins.op) {
          case OpCode::AllReduce:
          case OpCode::Broadcast:
          case OpCode::Reduce:
            collectives[{r, ins.group}].push_back(ref);
            break;
          case OpCode::SendActivation:
          case OpCode::SendGradient:
            sends[{r, ins.peer, ins.tag}].push_back(ref);
            break;
          case OpCode::RecvActivation:
          case OpCode::RecvGradient:
            recvs[{ins.peer, r, ins.tag}].push_back(ref);
            break;
          default:
            break;
        }
      }
  std::map<std::pair<int, int>, std::vector<InstructionRef>> deps;
  for (int r = 0; r < static_cast<int>(ranks.size()); ++r)
    for (int s = 0; s < static_cast<int>(ranks[r].streams.size()); ++s)
      for (size_t i = 0; i < ranks[r].streams[s].size(); ++i)
        if (ranks[r].streams[s][i].op == OpCode::Record)
          deps[{r, ranks[r].streams[s][i].event}].push_back({r, s, i});
  for (const auto& [key, list] : collectives) {
    const int group = key.second;
    for (size_t k = 0; k < list.size(); ++k) {
      auto& d = deps[{key.first, at(list[k]).event}];
      if (group < 0 || group >= static_cast<int>(program.groups.size())) {
        d.push_back(list[k]);
        continue;
      }
      for (int m : program.groups[group]) {
        auto it = collectives.find({m, group});
        if (it != collectives.end() && k < it->second.size()) d.push_back(it->second[k]);
      }
    }
  }
  for (const auto& [channel, list] : sends) {
    auto other = recvs.find(channel);
    for (size_t k = 0; k < list.size(); ++k) {
      auto& d = deps[{list[k].rank, at(list[k]).event}];
      d.push_back(list[k]);
      if (other != recvs.end() && k < other->second.size()) d.push_back(other->second[k]);
    }
  }
  for (const auto& [channel, list] : recvs) {
    auto other = sends.find(channel);
    for (size_t k = 0; k < list.size(); ++k) {
      auto& d = deps[{list[k].rank, at(list[k]).event}];
      d.push_back(list[k]);
      if (other != sends.end() && k < other->second.size()) d.push_back(other->second[k]);
    }
  }
  return deps;
}

}  // namespace wt

#include "sched/event_dependencies.hpp"

#include <tuple>

#include "sched/opcode_traits.hpp"

namespace wt {

std::tuple<int, int, int> message_channel(int rank, const Instruction& ins, CommRules rules) {
  const int tag = rules == CommRules::Nccl ? 0 : ins.tag;
  return is_send(ins.op) ? std::make_tuple(rank, ins.peer, tag)
                         : std::make_tuple(ins.peer, rank, tag);
}

std::map<std::pair<int, int>, std::vector<InstructionRef>> event_dependencies(
    const Program& program, CommRules rules) {
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
        switch (opcode_traits(ins.op).comm) {
          case CommPattern::Collective:
            collectives[{r, ins.group}].push_back(ref);
            break;
          case CommPattern::Send:
            sends[message_channel(r, ins, rules)].push_back(ref);
            break;
          case CommPattern::Receive:
            recvs[message_channel(r, ins, rules)].push_back(ref);
            break;
          case CommPattern::None:
            break;
        }
      }
  std::map<std::pair<int, int>, std::vector<InstructionRef>> deps;
  for (int r = 0; r < static_cast<int>(ranks.size()); ++r)
    for (int s = 0; s < static_cast<int>(ranks[r].streams.size()); ++s)
      for (size_t i = 0; i < ranks[r].streams[s].size(); ++i)
        if (opcode_traits(ranks[r].streams[s][i].op).op_class == OpClass::Ordering &&
            opcode_traits(ranks[r].streams[s][i].op).completes_event)
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

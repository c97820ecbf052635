#include "sched/cycle_table.hpp"

#include <algorithm>

#include "sched/event_dependencies.hpp"

namespace wt {

CycleTable assign_cycles(const Program& program) {
  const auto deps = event_dependencies(program);
  const int world = static_cast<int>(program.ranks.size());
  CycleTable table;
  table.cycle.resize(world);
  std::vector<std::vector<size_t>> pos(world);
  std::vector<std::vector<int>> clock(world);
  for (int r = 0; r < world; ++r) {
    const auto& streams = program.ranks[r].streams;
    pos[r].assign(streams.size(), 0);
    clock[r].assign(streams.size(), 0);
    for (const auto& s : streams) table.cycle[r].emplace_back(s.size(), -1);
  }
  // The cycle by which an event has completed, or -1 while some end is not issued yet.
  auto completed_at = [&](int r, int event) {
    auto it = deps.find({r, event});
    if (it == deps.end()) return -1;
    int t = 0;
    for (const InstructionRef& d : it->second) {
      const int c = table.cycle[d.rank][d.stream][d.index];
      if (c < 0) return -1;
      t = std::max(t, c);
    }
    return t;
  };
  bool progressed = true;
  while (progressed) {
    progressed = false;
    for (int r = 0; r < world; ++r)
      for (size_t s = 0; s < pos[r].size(); ++s) {
        const auto& stream = program.ranks[r].streams[s];
        while (pos[r][s] < stream.size()) {
          const Instruction& ins = stream[pos[r][s]];
          if (ins.op == OpCode::Wait) {
            const int t = completed_at(r, ins.event);
            if (t < 0) break;
            clock[r][s] = std::max(clock[r][s], t);
          }
          table.cycle[r][s][pos[r][s]] = clock[r][s];
          if (ins.op == OpCode::Forward || ins.op == OpCode::Backward) ++clock[r][s];
          table.cycles = std::max(table.cycles, clock[r][s]);
          ++pos[r][s];
          progressed = true;
        }
      }
  }
  return table;
}

}  // namespace wt

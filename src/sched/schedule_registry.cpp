#include "sched/schedule_registry.hpp"

#include <map>
#include <set>
#include <stdexcept>

namespace wt {

namespace {
std::map<std::string, ScheduleGenerator>& table() {
  static std::map<std::string, ScheduleGenerator> t;
  return t;
}
}  // namespace

bool ScheduleRegistry::add(const std::string& kind, ScheduleGenerator generator) {
  if (!table().emplace(kind, std::move(generator)).second)
    throw std::logic_error("schedule '" + kind + "' registered twice");
  return true;
}

bool ScheduleRegistry::contains(const std::string& kind) { return table().count(kind) > 0; }

Program ScheduleRegistry::generate(const std::string& kind, const ScheduleInput& input) {
  auto it = table().find(kind);
  if (it == table().end()) throw std::invalid_argument("unknown schedule kind '" + kind + "'");
  Program p = it->second(input);
  validate_program(p, static_cast<int>(input.stages.size()));
  return p;
}

std::vector<std::string> ScheduleRegistry::known_kinds() {
  std::vector<std::string> k;
  for (const auto& [name, gen] : table()) k.push_back(name);
  return k;
}

void validate_program(const Program& program, int stage_count) {
  if (static_cast<int>(program.ranks.size()) != program.world_size)
    throw std::logic_error(program.schedule + ": program has " +
                           std::to_string(program.ranks.size()) + " ranks for a world of " +
                           std::to_string(program.world_size));
  for (int r = 0; r < program.world_size; ++r) {
    std::set<int> completed, waited, loaded;
    for (const auto& stream : program.ranks[r].streams) {
      for (const auto& ins : stream) {
        auto where = [&] {
          return program.schedule + " rank " + std::to_string(r) + ": " + ins.str();
        };
        if ((ins.op == OpCode::Forward || ins.op == OpCode::Backward || ins.op == OpCode::Step ||
             ins.op == OpCode::AllReduce) &&
            (ins.stage < 0 || ins.stage >= stage_count))
          throw std::logic_error(where() + ": stage out of range");
        if ((ins.op == OpCode::LoadBatch || ins.op == OpCode::Forward ||
             ins.op == OpCode::Backward) &&
            (ins.slot < 0 || ins.slot >= program.slots))
          throw std::logic_error(where() + ": slot out of range");
        if (ins.op == OpCode::LoadBatch) loaded.insert(ins.slot);
        if ((ins.op == OpCode::Forward) && !loaded.count(ins.slot))
          throw std::logic_error(where() + ": slot used before it is loaded");
        if (ins.op == OpCode::AllReduce) {
          if (ins.event < 0 || ins.event >= program.events || !completed.insert(ins.event).second)
            throw std::logic_error(where() + ": event missing, out of range or completed twice");
          if (ins.group < 0 || ins.group >= static_cast<int>(program.groups.size()))
            throw std::logic_error(where() + ": unknown group");
        }
        if (ins.op == OpCode::Wait) waited.insert(ins.event);
      }
    }
    for (int e : waited)
      if (!completed.count(e))
        throw std::logic_error(program.schedule + " rank " + std::to_string(r) +
                               ": waits on event " + std::to_string(e) +
                               " that nothing completes (deadlock)");
  }
}

}  // namespace wt

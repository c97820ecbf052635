#include "sched/schedule_registry.hpp"

#include <map>
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
  // Every schedule must run under both libraries' rules: host ranks use MPI, GPU ranks NCCL.
  validate_program(p, static_cast<int>(input.stages.size()), CommRules::Mpi);
  validate_program(p, static_cast<int>(input.stages.size()), CommRules::Nccl);
  return p;
}

namespace {
std::map<std::string, std::function<int(int)>>& stage_rules() {
  static std::map<std::string, std::function<int(int)>> t;
  return t;
}
}  // namespace

bool ScheduleRegistry::add_stage_rule(const std::string& kind, std::function<int(int)> stages) {
  stage_rules()[kind] = std::move(stages);
  return true;
}

int ScheduleRegistry::stage_count(const std::string& kind, int world) {
  auto it = stage_rules().find(kind);
  return it == stage_rules().end() ? 1 : it->second(world);
}

std::vector<std::string> ScheduleRegistry::known_kinds() {
  std::vector<std::string> k;
  for (const auto& [name, gen] : table()) k.push_back(name);
  return k;
}

}  // namespace wt

#pragma once
// Schedule kind -> generator. A schedule is one generator file in sched/ ending with
//   WT_REGISTER_SCHEDULE("gang", generate_gang);
// A generator is a pure function of the topology, the model's stages and the deck.
#include <functional>
#include <string>
#include <vector>

#include "deck/run_config.hpp"
#include "sched/instruction.hpp"

namespace wt {

struct StageInfo {
  int node_begin = 0;
  int node_end = 0;
  std::vector<int64_t> node_param_bytes;  // per node of the stage
};

struct ScheduleInput {
  int world_size = 1;
  std::vector<StageInfo> stages;
  RunConfig::Schedule deck;
};

using ScheduleGenerator = std::function<Program(const ScheduleInput&)>;

class ScheduleRegistry {
 public:
  static bool add(const std::string& kind, ScheduleGenerator generator);
  static bool contains(const std::string& kind);
  static Program generate(const std::string& kind, const ScheduleInput& input);
  static std::vector<std::string> known_kinds();
};

// Static checks every program must pass (used by tests and before running): every event waited on
// is completed by some instruction, every slot loaded before use, stages in range.
void validate_program(const Program& program, int stage_count);

}  // namespace wt

#define WT_REGISTER_SCHEDULE(kind, fn) \
  static const bool wt_schedule_registered_##fn = ::wt::ScheduleRegistry::add(kind, fn)

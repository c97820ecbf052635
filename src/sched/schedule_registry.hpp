#pragma once
// Schedule kind -> generator. A schedule is one generator file in sched/ ending with
//   WT_REGISTER_SCHEDULE("gang", generate_gang);
// A generator is a pure function of the topology, the model's stages and the deck.
#include <functional>
#include <string>
#include <vector>

#include "sched/comm_rules.hpp"
#include "sched/instruction.hpp"
#include "sched/schedule_options.hpp"

namespace wt {

struct StageInfo {
  int node_begin = 0;
  int node_end = 0;
  std::vector<int64_t> node_param_bytes;  // per node of the stage
  int64_t in_bytes_per_sample = 0;        // activation entering the stage (0 for the first)
  int64_t out_bytes_per_sample = 0;       // activation leaving it (0 for the last)
  // Per node of the stage, per sample: bytes of its output, held from its forward to its backward
  // (empty: unknown, every node counts the same).
  std::vector<int64_t> node_activation_bytes = {};
};

struct ScheduleInput {
  int world_size = 1;
  std::vector<StageInfo> stages;
  ScheduleOptions deck;      // the deck's [schedule] table
  int64_t global_batch = 0;  // samples per global batch (sizes point-to-point messages)
  // burst: how many ranks run each stage (ranks 0..count-1); empty for the other schedules.
  std::vector<int> stage_ranks = {};
};

// Samples in part `part` of `parts` of a batch of `batch` samples (the BatchSource contract).
inline int64_t part_samples(int64_t batch, int part, int parts) {
  return batch * (part + 1) / parts - batch * part / parts;
}

using ScheduleGenerator = std::function<Program(const ScheduleInput&)>;

class ScheduleRegistry {
 public:
  static bool add(const std::string& kind, ScheduleGenerator generator);
  static bool contains(const std::string& kind);
  static Program generate(const std::string& kind, const ScheduleInput& input);
  static std::vector<std::string> known_kinds();
  // How many stages the schedule cuts the model into on `world` ranks (1 unless registered).
  static bool add_stage_rule(const std::string& kind, std::function<int(int world)> stages);
  static int stage_count(const std::string& kind, int world);
};

// Static checks every program must pass (used by tests and before running), without running any
// math: stages, slots, groups and events in range; every slot filled before use; every Send has
// its Recv with the same byte count; every (stage, batch part) forward and backward exactly once;
// collectives on a group issued in one order by all its members; every communication waited on;
// and no deadlock (the ranks' streams are run abstractly to the end) under the communication
// library's rules (CommRules: under NCCL's, a pair's messages also come from one stream and match
// in order whatever their tags); and no data hazard within a rank (sched/hazard_check.hpp: state
// two instructions touch, one writing, with no stream order, Record/Wait chain or Wait on a
// communication's event between them). Throws std::logic_error.
void validate_program(const Program& program, int stage_count, CommRules rules = CommRules::Mpi);

}  // namespace wt

#define WT_REGISTER_SCHEDULE(kind, fn) \
  static const bool wt_schedule_registered_##fn = ::wt::ScheduleRegistry::add(kind, fn)
// A schedule that cuts the model into one stage per rank.
#define WT_SCHEDULE_STAGE_PER_RANK(kind, id)  \
  static const bool wt_schedule_stages_##id = \
      ::wt::ScheduleRegistry::add_stage_rule(kind, [](int world) { return world; })

#include "job/simulated_run.hpp"

#include <stdexcept>
#include <utility>
#include <vector>

#include "deck/component_options.hpp"
#include "exec/schedule_input.hpp"
#include "job/deck_burst_plan.hpp"
#include "model/stage_cuts.hpp"
#include "plan/burst_stages.hpp"
#include "plan/stage_planner.hpp"
#include "pricing/planning_units.hpp"
#include "sched/schedule_registry.hpp"
#include "util/input_error.hpp"

namespace wt {

SimulatedRun simulated_run(const RunConfig& config, const Graph& graph, const DeviceModel& device,
                           const LayerProfile* profile, int ranks) {
  int stages = ScheduleRegistry::stage_count(config.schedule.kind, ranks);
  std::vector<int> cuts, stage_ranks;
  if (config.schedule.kind == "burst") {  // the planner's segments, priced on this device
    const CostModel whole(graph, {}, device, profile,
                          optimizer_state_floats(config.optimizer.kind, config.optimizer.momentum));
    std::vector<int> counts;
    for (const BurstUnitPlan& u : deck_burst_plan(config, graph, whole, ranks).units)
      counts.push_back(u.count);
    BurstStages plan = burst_stages(burst_units(graph), counts);
    cuts = std::move(plan.cuts);
    stage_ranks = std::move(plan.stage_ranks);
    stages = int(stage_ranks.size());
  } else if (profile && config.schedule.cuts.empty() && config.schedule.balance == "profile" &&
             stages > 1)
    try {
      cuts = balanced_cuts(graph, stages, node_seconds(*profile, stage_batch(config)));
    } catch (const std::invalid_argument& e) {
      throw InputError(config.deck_path, 0, "schedule.kind",
                       "'" + config.schedule.kind + "': " + e.what());
    }
  else
    cuts = resolve_cuts(stage_cut_options(config), graph, stages);
  Program program;
  try {
    ScheduleInput input =
        make_schedule_input(graph, cuts, config.schedule, config.train.global_batch, ranks);
    input.stage_ranks = stage_ranks;
    program = ScheduleRegistry::generate(config.schedule.kind, input);
  } catch (const std::invalid_argument& e) {
    throw InputError(config.deck_path, 0, "schedule.kind",
                     "'" + config.schedule.kind + "': " + e.what());
  }
  SimOptions options;
  options.global_batch = config.train.global_batch;
  options.codec = config.compress;
  if (config.data.distribution == "scatter")
    options.scatter_bytes_per_sample =
        shape_numel(graph.input_shape) * int64_t(sizeof(float)) + int64_t(sizeof(int32_t));
  return {std::move(program),
          CostModel(graph, cuts, device, profile,
                    optimizer_state_floats(config.optimizer.kind, config.optimizer.momentum)),
          options, stages};
}

}  // namespace wt

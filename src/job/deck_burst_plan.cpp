#include "job/deck_burst_plan.hpp"

#include <string>
#include <vector>

#include "job/burst_choice.hpp"
#include "pricing/burst_costs.hpp"
#include "util/input_error.hpp"

namespace wt {

BurstPlan deck_burst_plan(const RunConfig& config, const Graph& graph, const CostModel& costs,
                          int ranks) {
  const int64_t batch = config.train.global_batch;
  const std::vector<int> counts = burst_counts(ranks, batch);
  if (counts.size() < 2 && ranks > 1)
    throw InputError(config.deck_path, 0, "train.global_batch",
                     std::to_string(batch) + " samples divide over no rank count above 1 up to " +
                         std::to_string(ranks));
  const std::vector<PlanningUnit> units = burst_units(graph);
  const BurstCosts table =
      burst_cost_table(costs, units, counts, batch, burst_cost_options(config, graph));
  const BurstOptions options = burst_planner_options(config);
  if (config.burst.ranks.empty()) return plan_burst(table, options);
  return price_burst_plan(table, options, forced_burst_counts(config, graph, ranks));
}

}  // namespace wt

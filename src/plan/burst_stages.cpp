#include "plan/burst_stages.hpp"

namespace wt {

BurstStages burst_stages(const std::vector<PlanningUnit>& units,
                         const std::vector<int>& unit_counts) {
  BurstStages stages;
  for (size_t u = 0; u < units.size(); ++u) {
    if (u > 0 && unit_counts[u] == unit_counts[u - 1]) continue;
    if (u > 0) stages.cuts.push_back(units[u].node_begin);
    stages.stage_ranks.push_back(unit_counts[u]);
  }
  return stages;
}

}  // namespace wt

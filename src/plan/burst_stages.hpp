#pragma once
// A burst plan's unit counts as the schedule's stages (sched/burst.cpp runs them).
#include <vector>

#include "pricing/planning_units.hpp"

namespace wt {

// A plan as the burst schedule runs it: segments (maximal runs of units with equal counts) as
// stages, each on ranks 0..count-1.
struct BurstStages {
  std::vector<int> cuts;         // first node of every stage after the first
  std::vector<int> stage_ranks;  // per stage
};
BurstStages burst_stages(const std::vector<PlanningUnit>& units,
                         const std::vector<int>& unit_counts);

}  // namespace wt

#pragma once
// The burst plan a deck asks for on a number of ranks, priced by a cost model (no communication,
// nothing measured): what --show-plan prints, what --simulate and auto run as the burst
// schedule's segments.
#include "deck/run_config.hpp"
#include "model/graph.hpp"
#include "plan/burst_planner.hpp"
#include "pricing/cost_model.hpp"

namespace wt {

// The plan the deck asks for on `ranks` ranks, priced by `costs` (built for the whole model, no
// cuts): the forced one (burst.ranks, checked as the trainer checks it) or the planner's.
// Throws InputError.
BurstPlan deck_burst_plan(const RunConfig& config, const Graph& graph, const CostModel& costs,
                          int ranks);

}  // namespace wt

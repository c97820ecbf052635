#pragma once
// `wavetrain DECK --show-plan --ranks N --device NAME|FILE [--profile FILE]`: DeepPool's burst
// plan of the deck's model at its global batch on N ranks of the device (plan/burst_planner.hpp),
// printed as DeepPool prints it: per planning unit the rank count, compute, incoming transfer,
// gradient sync, cumulative time and amplification; then the segments, the predicted step, the
// GPU-seconds and each rank's idle time, beside data parallelism on all N ranks.
#include <ostream>
#include <string>

#include "deck/run_config.hpp"
#include "model/graph.hpp"
#include "plan/burst_planner.hpp"
#include "pricing/cost_model.hpp"

namespace wt {

struct ShowPlanRequest {
  int ranks = 1;
  std::string device;   // built-in name or device file
  std::string profile;  // measured layer times (profile.h5); empty = the device's roofline
};

// The plan the deck asks for on `ranks` ranks, priced by `costs` (built for the whole model, no
// cuts): the forced one (burst.ranks, checked as the trainer checks it) or the planner's.
// Throws InputError.
BurstPlan deck_burst_plan(const RunConfig& config, const Graph& graph, const CostModel& costs,
                          int ranks);

// Throws InputError for a bad device or profile, or a global batch no candidate count divides.
void show_burst_plan(const RunConfig& config, const ShowPlanRequest& request, std::ostream& out);

}  // namespace wt

#pragma once
// A deck's step as the simulator runs it: its schedule generated for a number of ranks (the
// stages cut as a run cuts them, the burst schedule's segments as its planner plans them) and
// priced on a device model. What --simulate prints and auto ranks its candidates by.
#include "deck/run_config.hpp"
#include "model/graph.hpp"
#include "pricing/cost_model.hpp"
#include "pricing/device_model.hpp"
#include "pricing/layer_profile.hpp"
#include "sched/instruction.hpp"
#include "sim/simulator.hpp"

namespace wt {

// The deck's schedule generated for `ranks` ranks and priced on `device` (profile: measured
// layer times, else nullptr for the roofline), ready for simulate(). Throws InputError.
struct SimulatedRun {
  Program program;
  CostModel costs;
  SimOptions options;
  int stages = 0;
};
SimulatedRun simulated_run(const RunConfig& config, const Graph& graph, const DeviceModel& device,
                           const LayerProfile* profile, int ranks);

}  // namespace wt

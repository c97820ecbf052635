#pragma once
// `wavetrain DECK --simulate --ranks R --device NAME|FILE`: the deck's schedule, generated for R
// ranks, run by the simulator against the device's cost model. Prints the predicted step time,
// throughput, per-rank busy fraction and peak memory; nothing is trained and no MPI peer is
// needed, so R can be 1024 on a laptop.
#include <ostream>
#include <string>

#include "deck/run_config.hpp"
#include "model/graph.hpp"
#include "pricing/cost_model.hpp"
#include "sched/instruction.hpp"
#include "sim/simulator.hpp"

namespace wt {

struct SimulateRequest {
  int ranks = 1;
  std::string device;      // built-in name or device file
  std::string profile;     // measured layer times (profile.h5); empty = roofline
  std::string trace_path;  // write the simulated step as a trace.h5; empty = none
};

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

// The profile.h5 at `path` (--profile), checked against the graph. Throws InputError.
LayerProfile load_checked_profile(const std::string& path, const Graph& graph);

// Throws InputError for a bad device, profile or schedule; returns nothing but prints the report.
void run_simulate_command(const RunConfig& config, const SimulateRequest& request,
                          std::ostream& out);

}  // namespace wt

#pragma once
// `wavetrain DECK --simulate --ranks R --device NAME|FILE`: the deck's schedule, generated for R
// ranks, run by the simulator against the device's cost model. Prints the predicted step time,
// throughput, per-rank busy fraction and peak memory; nothing is trained and no MPI peer is
// needed, so R can be 1024 on a laptop.
#include <ostream>
#include <string>

#include "deck/run_config.hpp"

namespace wt {

struct SimulateRequest {
  int ranks = 1;
  std::string device;      // built-in name or device file
  std::string profile;     // measured layer times (profile.h5); empty = roofline
  std::string trace_path;  // write the simulated step as a trace.h5; empty = none
};

// Throws InputError for a bad device, profile or schedule; returns nothing but prints the report.
void run_simulate_command(const RunConfig& config, const SimulateRequest& request,
                          std::ostream& out);

}  // namespace wt

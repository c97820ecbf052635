#pragma once
// `wavetrain DECK --show-plan --ranks N --device NAME|FILE [--profile FILE]`: DeepPool's burst
// plan of the deck's model at its global batch on N ranks of the device (plan/burst_planner.hpp),
// printed as DeepPool prints it: per planning unit the rank count, compute, incoming transfer,
// gradient sync, cumulative time and amplification; then the segments, the predicted step, the
// GPU-seconds and each rank's idle time, beside data parallelism on all N ranks.
#include <ostream>
#include <string>

#include "deck/run_config.hpp"

namespace wt {

struct ShowPlanRequest {
  int ranks = 1;
  std::string device;   // built-in name or device file
  std::string profile;  // measured layer times (profile.h5); empty = the device's roofline
};

// Throws InputError for a bad device or profile, or a global batch no candidate count divides.
void show_burst_plan(const RunConfig& config, const ShowPlanRequest& request, std::ostream& out);

}  // namespace wt

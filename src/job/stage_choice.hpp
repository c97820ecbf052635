#pragma once
// The trainer's stage cut, identical on every rank: rank 0 plans it (plan/stage_planner.hpp:
// deck cuts, the resumed checkpoint's cuts, or a balance by profiled time or FLOPs, profiling at
// most once per run directory) and broadcasts it, so measurement noise on different ranks can
// never give ranks different cuts.
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "deck/run_config.hpp"
#include "device/device_context.hpp"
#include "io/run_log.hpp"
#include "model/graph.hpp"

namespace wt {

// Collective. `resuming`: the run will resume from the run directory's checkpoint if there is one,
// so that checkpoint's cuts are kept. Logs where the cut came from. Throws InputError (on every
// rank) when the graph cannot be cut into `stages` stages as the deck asks.
// `memory`: the device's, where a profiling probe of the model runs.
std::vector<int> choose_stage_cuts(const RunConfig& config, const Graph& graph, int stages,
                                   const std::string& run_dir, bool resuming, Communicator& comm,
                                   RunLog& log, DeviceContext& device);

}  // namespace wt

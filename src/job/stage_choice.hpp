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
#include "io/checkpoint_file.hpp"
#include "io/run_log.hpp"
#include "job/resume_request.hpp"
#include "model/graph.hpp"

namespace wt {

// The header of the checkpoint a resume will start from: the file --restart-from names, else the
// newest readable one of the run's checkpoint directory; empty (no cuts) when there is none or
// `resume` wants none. (Checkpointer::resume reports any that cannot be used.)
CheckpointInfo resumed_checkpoint_info(const RunConfig& config, const std::string& run_dir,
                                       const ResumeRequest& resume);

// Ranks other than 0 wait for rank 0's planning asleep instead of spinning in a blocking
// collective: where ranks share cores, a spinning neighbour slows the profiled layers and so
// skews the plan (measured: identical transformer blocks differed by 50%). Collective.
void wait_for_root_quietly(Communicator& comm);

// Collective. `resume`: the run will resume from a checkpoint if there is one, so that
// checkpoint's cuts are kept. Logs where the cut came from. Throws InputError (on every
// rank) when the graph cannot be cut into `stages` stages as the deck asks.
// `memory`: the device's, where a profiling probe of the model runs.
std::vector<int> choose_stage_cuts(const RunConfig& config, const Graph& graph, int stages,
                                   const std::string& run_dir, const ResumeRequest& resume,
                                   Communicator& comm, RunLog& log, DeviceContext& device);

}  // namespace wt

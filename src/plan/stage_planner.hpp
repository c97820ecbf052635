#pragma once
// Where a run cuts its model into stages, and why: the deck's explicit cuts, the cuts of the
// checkpoint being resumed, or cuts balanced by profiled forward+backward time per stage
// (schedule.balance = "profile": the layer profile cached as <run dir>/profile.h5, measured when
// missing) or by FLOPs (schedule.balance = "flops", and the fallback when profiling fails).
// Not collective: the trainer plans on rank 0 and broadcasts the cuts.
#include <string>
#include <vector>

#include "device/device_context.hpp"
#include "model/graph.hpp"
#include "model/stage_cuts.hpp"
#include "pricing/layer_profile.hpp"

namespace wt {

// What the deck tells the planner (deck/component_options.hpp fills it in).
struct StagePlanOptions {
  StageCutOptions cuts;             // explicit cuts, and the names errors give
  std::string balance = "profile";  // profile | flops
  std::string model_file;           // the profiler measures its own copy of the model
  uint64_t seed = 1;                // ... initialised with the run's seed
  int64_t stage_batch = 1;          // samples one forward of one stage processes
  // More batch sizes every layer must be measured at (the burst planner's per-rank batches); a
  // cached profile without them is measured again.
  std::vector<int64_t> profile_batches = {};
};

enum class ProfileCache {
  ReadWrite,  // a measured profile is written to the run directory (training)
  ReadOnly,   // never written (--show-stages, --show-schedule)
};

// A layer profile for the deck's model: the cached one when it matches the model, else a fresh
// measurement at config.stage_batch.
struct ObtainedProfile {
  LayerProfile profile;
  std::string path;                   // <run dir>/profile.h5
  bool measured = false;              // false: loaded from `path`
  bool saved = false;                 // measured and written to `path`
  double seconds = 0;                 // time spent measuring
  std::vector<std::string> warnings;  // a cached profile that was unusable, a failed write
};
// Throws OutOfMemory when the device budget cannot hold the model's activations for profiling.
// The probe model lives in `memory` (the device's), under its budget, and leaves it as it was.
ObtainedProfile obtain_layer_profile(const StagePlanOptions& config, const Graph& graph,
                                     const std::string& run_dir, ProfileCache cache,
                                     DeviceContext& device);

// Forward+backward seconds of every node at `batch` samples.
std::vector<double> node_seconds(const LayerProfile& profile, int64_t batch);

struct StagePlan {
  std::vector<int> cuts;             // first node of every stage after the first
  std::string basis;                 // deck | checkpoint | profile | flops | single
  std::string description;           // one line for the run log
  std::vector<double> node_seconds;  // at config.stage_batch; empty when nothing was profiled
  std::vector<std::string> warnings;
};

// checkpoint_cuts: the cuts of the checkpoint the run resumes from (empty: none); they are used
// when they fit `stages` and the graph, so a resumed run never re-balances into another cut.
// Throws InputError (schedule.kind / schedule.cuts) when the graph cannot be cut as asked.
StagePlan plan_stages(const StagePlanOptions& config, const Graph& graph, int stages,
                      const std::string& run_dir, ProfileCache cache, DeviceContext& device,
                      const std::vector<int64_t>& checkpoint_cuts = {});

}  // namespace wt

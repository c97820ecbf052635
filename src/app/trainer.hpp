#pragma once
// One training run of one deck: builds the job (job/job.hpp), its observers (app/observers/:
// progress, metrics, evaluation, checkpoints and stops, trace, summary) and the training loop
// that drives them (app/training_loop.hpp).
#include <functional>
#include <string>

#include "comm/communicator.hpp"
#include "deck/run_config.hpp"

namespace wt {

struct TrainOptions {
  std::string run_dir;    // overrides <run.output_dir>/<run.name> when non-empty
  int64_t max_steps = 0;  // overrides train.max_steps when > 0
  bool quiet = false;
  bool restart = false;      // --restart: resume from the newest checkpoint (one must exist)
  std::string restart_from;  // --restart-from FILE
  bool skip_locked = false;  // --skip-locked
  bool overwrite = false;    // --overwrite: an earlier run in the run directory is removed
  double walltime_s = 0;     // --walltime: checkpoint and stop before this many seconds pass
  int gpu = 0;               // device.kind = "cuda": the GPU this rank drives (place_on_gpu)
  std::function<void(int64_t step)> on_step;  // called before each step (the stall detector)
};

struct TrainResult {
  double test_accuracy = -1;  // last evaluation, -1 if none ran
  double test_loss = 0;
  int64_t steps = 0;
  double wall_s = 0;
  double samples_per_s_median = 0;
  int64_t start_step = 0;      // > 0 when resumed from a checkpoint
  bool stopped_early = false;  // a signal or the walltime stopped it after a checkpoint: resumable
  int64_t skipped_steps = 0;   // non-finite gradient, failure.on_nonfinite = "skip"
};

TrainResult train(const RunConfig& config, const TrainOptions& options, Communicator& comm);

// The run directory a deck resolves to under these options.
std::string run_directory(const RunConfig& config, const TrainOptions& options);

}  // namespace wt

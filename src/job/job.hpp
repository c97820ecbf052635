#pragma once
// A job is one deck: its model (and replicas), optimizer, data source, program, executor,
// checkpoints, run directory and metrics. A rank usually runs one job; the training loop
// (app/training_loop.hpp) can drive several on one rank, each with its own run directory.
//
// A job is built in two phases so that bad input never hangs a rank:
//   - the constructor does everything local that can reject the input (deck against model and
//     data, the run directory, its lock, deck.toml, log.txt) with no collective call, so the
//     caller runs it under agree_on_failure and every rank ends alike;
//   - start() is collective: stage cuts, program, executor, and the resume from a checkpoint.
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "data/batch_sampler.hpp"
#include "data/dataset_batch_source.hpp"
#include "data/dataset_digest.hpp"
#include "data/dataset_reader.hpp"
#include "deck/run_config.hpp"
#include "device/device_context.hpp"
#include "exec/executor.hpp"
#include "exec/nonfinite_guard.hpp"
#include "io/metrics_writer.hpp"
#include "io/run_log.hpp"
#include "job/checkpointer.hpp"
#include "job/resume_request.hpp"
#include "job/run_dir_lock.hpp"
#include "model/model.hpp"
#include "ops/optimizers.hpp"

namespace wt {

// What the command line adds to a job's deck.
struct JobOptions {
  std::string run_dir;       // overrides <run.output_dir>/<run.name> when non-empty
  int64_t max_steps = 0;     // overrides train.max_steps when > 0
  bool quiet = false;        // progress lines off (warnings and results stay)
  bool restart = false;      // resume from the newest checkpoint (one must exist)
  std::string restart_from;  // resume from this checkpoint, whichever run wrote it
  bool skip_locked = false;  // a checkpoint locked by another process is skipped, not an error
  bool overwrite = false;    // an earlier run in the run directory is removed, not refused
  // Whether an earlier run in the run directory is refused unless resumed or overwritten
  // (job/earlier_run.hpp). Off for a background job and auto.measure's trials: their
  // directories lie inside their run's, which has already been resumed, replaced or refused.
  bool guard_earlier_run = true;
  int id = 0;  // the job's index on its rank: its account in the device's memory
  // Co-location (Waterwave): the device stream the job's one-stream schedule runs on, and its
  // Forward and Backward split node by node, so that a driver interleaves the rank's jobs inside
  // a step (exec/colocated_step.hpp). -1: the schedule as generated.
  int colocated_stream = -1;
  // With colocated_stream: the Backward of a node whose layer splits it runs as two instructions,
  // its input's gradient and then its parameters' (sched/job_placement.hpp's split_backward).
  bool split_backward = false;
  std::string log_prefix;  // before each console line (co-located jobs: "[<run.name>] ")
};

// What the deck and these options ask of a resume.
ResumeRequest resume_request(const RunConfig& config, const JobOptions& options);

// The run directory a deck resolves to under these options.
std::string run_directory(const RunConfig& config, const JobOptions& options);

class Job {
 public:
  // Local only (see above). `rank` and `ranks`: this rank in the job's communicator, and its size.
  // `device`: the rank's device context, shared with the rank's other jobs; it must outlive the
  // job.
  Job(const RunConfig& config, const JobOptions& options, DeviceContext& device, int rank,
      int ranks);
  ~Job();
  Job(const Job&) = delete;
  Job& operator=(const Job&) = delete;

  // Collective over `comm` (the same communicator on every rank of the job, for its lifetime).
  void start(Communicator& comm);

  // One optimizer step: the program's instructions for `step` at the schedule's learning rate. A
  // step the non-finite guard skipped is logged and returns empty stats.
  StepStats run_step(int64_t step);
  // run_step in two halves, for the training loop: launch_step begins, issues and launches the
  // step; collect_step waits for the oldest launched step's results and ends it as run_step does.
  // Where may_run_on() after a launch (device.overlap_steps), the next step may be launched before
  // this one is collected.
  void launch_step(int64_t step);
  StepStats collect_step(int64_t step);
  bool may_run_on() const { return executor_->may_run_on(); }
  // run_step in parts, for jobs interleaved inside a step (app/training_loop.hpp): begin_step sets
  // the step's learning rate and begins the executor's step; the caller issues its instructions
  // (executor().issue_ready) under the job's memory account; finish_step ends it as run_step does.
  void begin_step(int64_t step);
  StepStats finish_step(int64_t step);
  // finish_step in two halves, for a driver that carries the ranks' agreement on a non-finite
  // gradient in a step-end collective of its own (app/background/multiplexer.hpp):
  // finish_local_step ends this rank's part and returns its vote (NonFiniteGuard::vote);
  // finish_voted_step, given the votes summed over the job's ranks (< 0: the guard agrees on
  // them itself, as finish_step has it), ends the step; a skipped step's stats are empty.
  double finish_local_step(int64_t step);
  StepStats finish_voted_step(int64_t step, double votes);
  // The test split through the one evaluation path, summed over the ranks (collective).
  StepStats evaluate();
  // A signal or the wall time: the run ends after `steps_done` steps, resumable.
  void stop_after(int64_t steps_done);
  // Its driver ends it after `steps_done` steps, short of the deck's total, as a finished run (a
  // background job ends with its foreground): the end checkpoint and summary name that step.
  void end_after(int64_t steps_done) { total_steps_ = steps_done; }

  const RunConfig& config() const { return config_; }
  int id() const { return options_.id; }
  DeviceContext& device() { return device_; }
  const std::string& run_dir() const { return run_dir_; }
  RunLog& log() { return log_; }
  bool is_root() const { return root_; }
  Communicator& comm() { return *comm_; }
  Model& model() { return *model_; }
  Executor& executor() { return *executor_; }
  const Program& program() const { return program_; }  // every rank's
  DatasetBatchSource& source() { return *source_; }
  Checkpointer& checkpointer() { return *checkpointer_; }
  const NonFiniteGuard& guard() const { return *guard_; }
  MetricsWriter* metrics() { return metrics_.get(); }  // rank 0 only, else nullptr

  int64_t start_step() const { return start_step_; }
  int64_t total_steps() const { return total_steps_; }
  int64_t steps_per_epoch() const { return per_epoch_; }
  // Whether step (0-based) ends an epoch or the run.
  bool epoch_ends_after(int64_t step) const {
    return (step + 1) % per_epoch_ == 0 || step + 1 == total_steps_;
  }
  int64_t samples_per_step() const { return samples_per_step_; }
  int64_t labels_per_sample() const { return labels_per_sample_; }
  double learning_rate_now() const { return lr_; }  // of the last step run
  // Wall seconds of the run this one resumes (its metrics continue from there).
  double resumed_wall_seconds() const { return wall_offset_; }
  bool stopped_early() const { return stopped_early_; }
  // Why there is no test evaluation, or "" when there is one.
  const std::string& no_evaluation_reason() const { return no_evaluation_reason_; }

 private:
  void build_model_and_program(Communicator& comm);
  void build_executor(Communicator& comm);
  void allow_overlap();  // device.overlap_steps, where graphs are on and the job permits it
  void resume();
  ResumeRequest resume_request() const;
  void settle_earlier_run(const std::string& checkpoint_dir);

  RunConfig config_;
  JobOptions options_;
  DeviceContext& device_;
  bool root_;
  RunLog log_;
  std::string run_dir_;
  std::string earlier_run_;           // what the run directory held of an earlier run ("" nothing)
  std::unique_ptr<RunDirLock> lock_;  // rank 0 owns the run directory while the job lives
  std::unique_ptr<RunDirLock> checkpoint_lock_;  // and the checkpoint directory
  std::unique_ptr<Graph> graph_;                 // until the model takes it
  std::unique_ptr<DatasetReader> train_reader_, test_reader_;
  DatasetDigest dataset_digest_;  // what start() checks every rank agrees on
  int64_t labels_per_sample_ = 1;
  int fused_relus_ = 0;      // ReLUs folded into their neighbours (model.fuse_epilogues)
  int blocked_tensors_ = 0;  // activations kept channel-blocked (model/block_channels.hpp)
  std::string no_evaluation_reason_;

  Communicator* comm_ = nullptr;
  std::unique_ptr<Model> model_;
  std::vector<std::unique_ptr<Model>> more_replicas_;  // ticktock: one replica per extra wave
  std::unique_ptr<BatchSampler> sampler_;
  std::unique_ptr<DatasetBatchSource> source_;
  std::unique_ptr<BatchSource> scatter_;  // data.distribution = "scatter": rank 0 reads, scatters
  Program program_;
  std::unique_ptr<Optimizer> optimizer_;
  std::unique_ptr<NonFiniteGuard> guard_;
  StepStats local_stats_;  // finish_local_step's, for finish_voted_step
  std::unique_ptr<Executor> executor_;
  std::unique_ptr<Checkpointer> checkpointer_;
  std::unique_ptr<MetricsWriter> metrics_;

  int64_t per_epoch_ = 1, total_steps_ = 0, start_step_ = 0, samples_per_step_ = 0;
  double lr_ = 0, wall_offset_ = 0;
  bool stopped_early_ = false;
};

}  // namespace wt

#pragma once
// [background] deck = "...": DeepPool's multiplexing set up on every rank of the foreground job.
// The background deck is parsed and checked like any deck (its errors name its own file, line
// and key), and must describe a local job: schedule.kind = "gang" on one rank, no [colocate] or
// [background] of its own, data sharded (not scattered from rank 0). Each rank trains its own
// copy on its own MPI_COMM_SELF communicator, into <run dir>/background/rank_<r>/ (metrics,
// checkpoints, log, tasklets.csv), on the foreground's device as memory account 1, under
// background.memory_limit when set. A background that does not fit its memory at start is
// logged and left out; the foreground trains all the same.
#include <chrono>
#include <memory>

#include "app/background/background_split.hpp"
#include "app/background/multiplexer.hpp"
#include "app/trainer.hpp"
#include "comm/communicator.hpp"
#include "deck/run_config.hpp"
#include "job/job.hpp"

namespace wt {

class Job;
class JobObservers;
struct JobOptions;

class BackgroundTraining {
 public:
  // Collective over `world` (the foreground's communicator): a bad background deck ends every
  // rank alike.
  // A foreground that resumes (--restart, --restart-from, or its deck's checkpoint.restart =
  // "auto") resumes its background from the background's newest checkpoint, where there is one.
  BackgroundTraining(const RunConfig& foreground_config, const TrainOptions& options,
                     Job& foreground, Communicator& world,
                     std::chrono::steady_clock::time_point t_start);
  ~BackgroundTraining();
  // The foreground's step driver; nullptr when the background job could not start.
  StepDriver* driver() { return multiplexer_.get(); }
  // After the foreground's last step: the background's end, and a summary line in the
  // foreground's log.
  void finish();

 private:
  void start(const RunConfig& foreground_config, Job& foreground, Communicator& world,
             std::chrono::steady_clock::time_point t_start);
  // policy = "foreground_first" (or background.microbatches > 1): deck_ trains on micro-batches
  // when its longest node would not fit a tasklet (background_split.hpp).
  void split_long_nodes(const RunConfig::Background& settings, const JobOptions& options,
                        Job& foreground);
  // job_ and observers_ for deck_ split into `microbatches`.
  void build_job(int64_t microbatches);
  // foreground_first, after the foreground's warm-up: the split fitted to this rank's idle time.
  void refit(const RunConfig::Background& settings, double longest_wait_s);
  // The background left out where its nodes, at the finest split the refit takes, do not fit
  // half this rank's longest wait.
  void leave_out_if_nothing_fits(double longest_wait_s);
  // One line in the background's log (its rank's own) and the foreground's (rank 0's).
  template <typename... Args>
  void log_on_both(const char* fmt, Args... args) {
    job_->log().line(fmt, args...);
    foreground_.log().line(fmt, args...);
  }
  RunConfig unsplit_deck_, deck_;
  int64_t microbatches_ = 1;
  LongestNode longest_node_;  // its whole batch's and one sample's (not timed: 0)
  Job& foreground_;
  std::unique_ptr<Communicator> self_;
  JobOptions job_options_;
  std::chrono::steady_clock::time_point t_start_;
  std::unique_ptr<Job> job_;
  std::unique_ptr<JobObservers> observers_;
  std::unique_ptr<Multiplexer> multiplexer_;
};

// Throws InputError (naming the background deck's file, line and key) unless `deck` describes a
// local, single-rank job.
void check_background_deck(const RunConfig& deck);

}  // namespace wt

#pragma once
// The trainer's view of checkpoints: save the run's state at a step, and resume from the best
// usable checkpoint of the run directory (falling back past damaged ones, and saying so).
//
// Every checkpoint carries the identity of the run that wrote it (job/run_identity.hpp). A resume
// loads only this run's checkpoints: one written by another run (two decks sharing a
// checkpoint.dir) is refused, naming both runs, unless named with --restart-from, which also
// starts a run from another run's weights on purpose. Checkpoints from before identities were
// recorded (format version < 3) cannot be told apart: they are resumed, with a warning.
// A checkpoint locked by another process (open for writing) is in use, not damaged: the resume
// stops (exit 2) naming the holder, instead of falling back past it, unless --skip-locked.
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "deck/run_config.hpp"
#include "io/checkpoint_file.hpp"
#include "io/checkpoint_store.hpp"
#include "io/run_log.hpp"
#include "job/resume_request.hpp"
#include "sched/instruction.hpp"

namespace wt {

class Checkpointer {
 public:
  // batches_per_epoch: the job's steps per epoch; dataset_batches: the global batches in one pass
  // over its training split (a waves step trains one per rank).
  Checkpointer(const RunConfig& config, const std::string& run_dir, const Program& program,
               Model& model, Optimizer& optimizer, int64_t batches_per_epoch,
               int64_t dataset_batches, Communicator& comm, RunLog& log);

  // Collective. Writes and commits the checkpoint after `step` completed steps; returns the
  // seconds it took. A failed write or commit (a full disk) on any rank throws the same
  // AgreedError (status 1) on every rank, naming the file and the system's reason, after the
  // partial file is removed; `latest` still names the previous checkpoint.
  double save(int64_t step);

  // Collective. Loads the newest usable checkpoint (or request.from) and returns its step, or -1
  // when there is none. request.required (--restart) turns "none" into an InputError. Checkpoints
  // that cannot be read are skipped with a warning; if none can be, the newest one's error is
  // thrown on every rank. A checkpoint that contradicts the deck (model, global batch, seed), one
  // of another run, one locked by another process (unless request.skip_locked) and a request.from
  // that cannot be loaded are errors (InputError on every rank).
  int64_t resume(const ResumeRequest& request);

  // Collective. A run that does not resume must not write over another run's checkpoints: when
  // `latest` names a checkpoint another run wrote (its run_id differs), every rank throws an
  // InputError naming both runs. Its own checkpoints (a fresh start in the same run directory)
  // and unreadable ones are no one's to protect.
  void refuse_other_runs_checkpoints() const;

  // This run's identity, as its checkpoints record it (the same on every rank).
  const std::string& run_id() const { return info_.run_id; }

  const CheckpointStore& store() const { return store_; }

  // Schedules with several replicas per rank (ticktock): every save writes them and the kept
  // local gradients too, and resume loads them. Must agree with the program's replica count.
  void set_replicas(const ReplicaState& replicas);

 private:
  void check_against_deck(const std::string& path, const CheckpointInfo& info) const;
  void check_identity(const std::string& path, const CheckpointInfo& info, bool named) const;
  // When this start had to make the run's identity, and `theirs` (at `path`) was written by a run
  // in this very run directory: its run_id file was lost, not another run's checkpoint found.
  // Throws InputError naming the file and how to restore it (and removes the new identity, so
  // that restoring the old one is all it takes); returns otherwise.
  void refuse_lost_identity(const std::string& path, const CheckpointInfo& theirs,
                            const std::string& then) const;
  // Rank 0: reads, checks and loads `path`; returns its step. Throws InputError.
  int64_t load_on_root(const std::string& path, bool named) const;
  [[noreturn]] void fail_save(int64_t step, const std::string& error) const;
  // Rank 0's search for the newest usable checkpoint (local); "" when there is none.
  std::string choose(const std::vector<std::string>& candidates, const ResumeRequest& request,
                     int64_t* step) const;
  const RunConfig& config_;
  CheckpointStore store_;
  Model& model_;
  Optimizer& optimizer_;
  Communicator& comm_;
  RunLog& log_;
  CheckpointInfo info_;  // the header every save writes (step filled in per save)
  std::vector<int> stage_owner_;
  int replica_count_ = 1;  // the program's
  int64_t dataset_batches_ = 1;
  bool identity_created_ = false;  // rank 0: this start made <run dir>/run_id
  ReplicaState replicas_;          // replicas beyond the first, and kept gradients
};

}  // namespace wt

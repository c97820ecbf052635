#pragma once
// The trainer's view of checkpoints: save the run's state at a step, and resume from the best
// usable checkpoint of the run directory (falling back past damaged ones, and saying so).
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "deck/run_config.hpp"
#include "io/checkpoint_file.hpp"
#include "io/checkpoint_store.hpp"
#include "io/run_log.hpp"
#include "sched/instruction.hpp"

namespace wt {

class Checkpointer {
 public:
  Checkpointer(const RunConfig& config, const std::string& run_dir, const Program& program,
               Model& model, Optimizer& optimizer, int64_t batches_per_epoch, Communicator& comm,
               RunLog& log);

  // Collective. Writes and commits the checkpoint after `step` completed steps; returns the
  // seconds it took. A failed write or commit (a full disk) on any rank throws the same
  // AgreedError (status 1) on every rank, naming the file and the system's reason, after the
  // partial file is removed; `latest` still names the previous checkpoint.
  double save(int64_t step);

  // Collective. Loads the newest usable checkpoint and returns its step, or -1 when there is
  // none. `required` (--restart) turns "none" into an InputError. Checkpoints that cannot be
  // read are skipped with a warning; if none can be, the newest one's error is thrown on every
  // rank. A checkpoint that contradicts the deck (model, global batch, seed) is an error.
  int64_t resume(bool required);

  const CheckpointStore& store() const { return store_; }

  // Schedules with several replicas per rank (ticktock): every save writes them and the kept
  // local gradients too, and resume loads them. Must agree with the program's replica count.
  void set_replicas(const ReplicaState& replicas);

 private:
  void check_against_deck(const std::string& path, const CheckpointInfo& info) const;
  [[noreturn]] void fail_save(int64_t step, const std::string& error) const;
  // Rank 0's search for the newest usable checkpoint (local); "" when there is none.
  std::string choose(const std::vector<std::string>& candidates, bool required,
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
  ReplicaState replicas_;  // replicas beyond the first, and kept gradients
};

}  // namespace wt

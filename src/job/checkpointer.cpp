#include "job/checkpointer.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include "comm/failure_agreement.hpp"
#include "comm/mpi_communicator.hpp"
#include "deck/deck_parser.hpp"
#include "job/run_identity.hpp"
#include "sched/stage_residency.hpp"
#include "util/agreed_error.hpp"
#include "util/input_error.hpp"

namespace wt {

namespace {

// The owner of a stage is the first rank that runs its optimizer Step: after a step its copy of
// the parameters and optimizer state is the authoritative one (every schedule keeps this so).
std::vector<int> stage_owners(const Program& program, size_t stages) {
  std::vector<int> owner;
  for (const std::vector<int>& ranks : stage_steppers(program, int(stages)))
    owner.push_back(ranks.empty() ? 0 : ranks.front());
  return owner;
}

// "run ID (directory DIR)" for messages.
std::string describe_run(const CheckpointInfo& info) {
  return "run " + info.run_id + " (directory " + info.run_dir + ")";
}

// The deck keys a checkpoint may contradict: the user's to fix, not a damaged file to skip; and
// run_id, another run's checkpoint, which is never skipped past either.
bool must_not_skip(const InputError& e) {
  for (const char* key : {"train.global_batch", "run.seed", "optimizer.kind", "data.path", "model",
                          "stages", "schedule.kind", "run_id", "world_size"})
    if (e.key() == key) return true;
  return false;
}

}  // namespace

Checkpointer::Checkpointer(const RunConfig& config, const std::string& run_dir,
                           const Program& program, Model& model, Optimizer& optimizer,
                           int64_t batches_per_epoch, int64_t dataset_batches, Communicator& comm,
                           RunLog& log)
    : config_(config),
      store_((std::filesystem::path(run_dir) / config.checkpoint.dir).string(),
             config.checkpoint.keep),
      model_(model),
      optimizer_(optimizer),
      comm_(comm),
      log_(log),
      stage_owner_(stage_owners(program, model.stages.size())),
      replica_count_(program.replicas),
      dataset_batches_(dataset_batches) {
  info_.global_batch = config.train.global_batch;
  info_.batches_per_epoch = batches_per_epoch;
  info_.world_size = comm.size();
  info_.seed = config.run.seed;
  info_.schedule = config.schedule.kind;
  info_.model = model.graph.name;
  info_.optimizer = config.optimizer.kind;
  // The cuts in use, automatic ones included: a resumed run keeps them (job/stage_choice.hpp).
  for (size_t s = 1; s < model.stages.size(); ++s) info_.cuts.push_back(model.stages[s].node_begin);
  // burst's plan too: the ranks that step each stage (job/burst_choice.hpp).
  if (program.schedule == "burst")
    for (const std::vector<int>& ranks : stage_steppers(program, int(model.stages.size())))
      info_.stage_ranks.push_back(int64_t(ranks.size()));
  info_.deck_toml = to_toml(config);
  info_.run_dir = std::filesystem::absolute(run_dir).lexically_normal().string();
  // Rank 0 creates it; a failure (a file in the way, a read-only place) is every rank's error.
  // Rank 0 holds the run directory's lock: it alone reads or makes the run's identity.
  agree_on_failure(comm, [&] {
    if (comm.rank() != 0) return;
    store_.prepare(config.deck_path);
    info_.run_id = load_or_create_run_id(run_dir, &identity_created_);
  });
  broadcast_text(comm, info_.run_id, 0);
}

double Checkpointer::save(int64_t step) {
  const auto t0 = std::chrono::steady_clock::now();
  info_.step = step;
  std::string error;  // the same on every rank
  {
    // HDF5's and MPI-IO's collectives do not go through comm_: mark the whole write, so that the
    // stall watchdog reports a rank that never arrives as it does in a training collective.
    const std::unique_ptr<RegionMark> watch = comm_.watch_region(CommRegion::CheckpointWrite);
    try {
      // The job's own ranks (a background job's communicator is MPI_COMM_SELF's).
      auto* mpi = dynamic_cast<MpiCommunicator*>(&comm_.underlying());
      write_checkpoint(store_.temp_path(step), info_, model_, optimizer_, stage_owner_,
                       mpi ? mpi->world() : MPI_COMM_WORLD,
                       replicas_);             // returns after the collective close
    } catch (const CheckpointWriteError& e) {  // raised on every rank alike
      error = e.what();
    }
    if (error.empty()) {
      if (comm_.rank() == 0) try {
          store_.commit(step);
        } catch (const std::exception& e) {
          error = e.what();
        }
      // Also the barrier: nobody starts the next checkpoint before `latest` names this one.
      broadcast_text(comm_, error, 0);
    }
  }
  if (!error.empty()) fail_save(step, error);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  log_.line("wavetrain: checkpoint %s written (%.2f s)",
            std::filesystem::path(store_.final_path(step)).filename().c_str(), seconds);
  return seconds;
}

void Checkpointer::fail_save(int64_t step, const std::string& error) const {
  if (comm_.rank() == 0) {  // a partial file must not be mistaken for a checkpoint
    std::remove(store_.temp_path(step).c_str());
    std::remove((std::filesystem::path(store_.dir()) / "latest.tmp").c_str());
  }
  const std::string previous = store_.latest_name();
  const bool space =
      error.find("No space left") != std::string::npos || error.find("quota") != std::string::npos;
  const bool limit = error.find("ulimit -f") != std::string::npos;
  throw AgreedError(
      1, "wavetrain: error: " + error +
             (previous.empty() ? "; there is no earlier checkpoint"
                               : "; the previous checkpoint " + previous + " is kept as latest") +
             (space   ? "; free space or set checkpoint.dir elsewhere"
              : limit ? "; raise the file size limit (ulimit -f) of the job"
                      : "; set checkpoint.dir elsewhere or fix the cause"));
}

void Checkpointer::check_against_deck(const std::string& path, const CheckpointInfo& info) const {
  if (info.global_batch != config_.train.global_batch)
    throw InputError(path, 0, "train.global_batch",
                     "the checkpoint was trained with global_batch " +
                         std::to_string(info.global_batch) + ", the deck says " +
                         std::to_string(config_.train.global_batch) +
                         "; resuming must keep the global batch");
  if (info.seed != config_.run.seed)
    throw InputError(path, 0, "run.seed",
                     "the checkpoint was trained with seed " + std::to_string(info.seed) +
                         ", the deck says " + std::to_string(config_.run.seed) +
                         "; the data order depends on it");
  // Before the epoch length: a schedule with two waves per rank also has half the steps.
  if (info.replicas != replica_count_)
    throw InputError(path, 0, "schedule.kind",
                     "the checkpoint holds " + std::to_string(info.replicas) +
                         " model replica(s) per rank (schedule '" + info.schedule +
                         "'), the deck's schedule needs " + std::to_string(replica_count_));
  // A schedule whose step trains one global batch per rank (waves): the same dataset, but steps,
  // and so the data cursor, that do not carry over to another rank count.
  if (info.batches_per_epoch != info_.batches_per_epoch && info.world_size != comm_.size() &&
      info.batches_per_epoch == std::max<int64_t>(1, dataset_batches_ / info.world_size))
    throw InputError(path, 0, "world_size",
                     "the checkpoint was written by schedule '" + info.schedule + "' on " +
                         std::to_string(info.world_size) + " ranks, this run has " +
                         std::to_string(comm_.size()) + ": its step trains one global batch per " +
                         "rank, so its epoch has " + std::to_string(info.batches_per_epoch) +
                         " steps there and " + std::to_string(info_.batches_per_epoch) +
                         " here, and its step (the data cursor) cannot carry over to another " +
                         "rank count; resume on " + std::to_string(info.world_size) + " ranks");
  if (info.batches_per_epoch != info_.batches_per_epoch)
    throw InputError(path, 0, "data.path",
                     "the checkpoint's epoch has " + std::to_string(info.batches_per_epoch) +
                         " batches, this dataset gives " + std::to_string(info_.batches_per_epoch) +
                         ": a different dataset?");
  if (info.optimizer != config_.optimizer.kind)
    throw InputError(path, 0, "optimizer.kind",
                     "the checkpoint was trained with '" + info.optimizer + "', the deck says '" +
                         config_.optimizer.kind + "'");
}

void Checkpointer::set_replicas(const ReplicaState& replicas) {
  if (int(replicas.more.size()) + 1 != replica_count_)
    throw std::logic_error("checkpointer: the program has " + std::to_string(replica_count_) +
                           " replicas, given " + std::to_string(replicas.more.size() + 1));
  replicas_ = replicas;
}

void Checkpointer::refuse_lost_identity(const std::string& path, const CheckpointInfo& theirs,
                                        const std::string& then) const {
  if (!identity_created_ || theirs.run_id.empty() || theirs.run_dir != info_.run_dir) return;
  const std::string file = (std::filesystem::path(info_.run_dir) / kRunIdFile).string();
  std::remove(file.c_str());
  throw InputError(info_.run_dir, 0, "run_id",
                   file + " is missing: the run directory lost the file that names its run, and " +
                       path + " was written by run " + theirs.run_id +
                       " from this same directory: restore it (echo " + theirs.run_id + " > " +
                       file + ") and resubmit " + then);
}

void Checkpointer::check_identity(const std::string& path, const CheckpointInfo& info,
                                  bool named) const {
  if (info.run_id == info_.run_id) return;
  if (info.run_id.empty()) {
    log_.warning(
        "%s was written before checkpoints recorded the run that wrote them: whether it is "
        "this run's cannot be checked; resuming from it",
        path.c_str());
    return;
  }
  if (!named) refuse_lost_identity(path, info, "to resume it");
  if (named) {
    log_.line("wavetrain: %s was written by %s; starting from it as --restart-from asks",
              path.c_str(), describe_run(info).c_str());
    return;
  }
  throw InputError(path, 0, "run_id",
                   "written by another run, " + describe_run(info) + ", not by this " +
                       describe_run(info_) +
                       ": the two runs share a checkpoint directory (checkpoint.dir). Resume from "
                       "it on purpose with --restart-from " +
                       path + ", or give this run a checkpoint.dir of its own");
}

int64_t Checkpointer::load_on_root(const std::string& path, bool named) const {
  CheckpointInfo info = read_checkpoint_info(path);
  check_identity(path, info, named);
  check_against_deck(path, info);
  load_checkpoint(path, model_, optimizer_, 0, replicas_, comm_.size());
  if (!info.header_verified)
    log_.warning(
        "%s was written before checkpoints checksummed their header "
        "(format version 1): its step, seed and world size are taken unverified",
        path.c_str());
  if (info.world_size != comm_.size())
    log_.line(
        "wavetrain: checkpoint written by %d rank%s, resuming on %d (global batch %lld "
        "unchanged)",
        info.world_size, info.world_size > 1 ? "s" : "", comm_.size(),
        (long long)config_.train.global_batch);
  return info.step;
}

// Tries the candidates best first; throws InputError when the deck contradicts one, when one is
// another run's or locked (unless request.skip_locked), when none can be used, or when
// request.required and there is none. A checkpoint named by --restart-from is the only candidate.
std::string Checkpointer::choose(const std::vector<std::string>& candidates,
                                 const ResumeRequest& request, int64_t* step) const {
  const bool named = !request.from.empty();
  std::string first_error;
  for (const std::string& path : candidates) {
    try {
      *step = load_on_root(path, named);
      return path;
    } catch (const CheckpointLockedError& e) {
      const std::string& held = e.holder();  // "process N (name) holds a write lock on it"
      if (named || !request.skip_locked)
        throw InputError(path, 0, "",
                         "locked: " + held +
                             ": the checkpoint is in use, not damaged. Stopping rather than "
                             "falling back to an older checkpoint: end that process and "
                             "resubmit" +
                             (named ? std::string()
                                    : ", or pass --skip-locked to resume from the newest "
                                      "checkpoint before it"));
      if (first_error.empty()) first_error = e.what();
      log_.warning("skipping checkpoint %s: locked: %s (--skip-locked)", path.c_str(),
                   held.c_str());
    } catch (const InputError& e) {
      if (named || must_not_skip(e)) throw;
      if (first_error.empty()) first_error = e.what();
      log_.warning("skipping unusable checkpoint: %s", e.what());
    }
  }
  if (!first_error.empty())
    throw InputError(store_.dir(), 0, "",
                     "no usable checkpoint (" + std::to_string(candidates.size()) +
                         " tried); newest: " + first_error);
  if (request.required)
    throw InputError(store_.dir(), 0, "--restart",
                     "no checkpoint to resume from (none written yet in this run directory)");
  return "";
}

void Checkpointer::refuse_other_runs_checkpoints() const {
  agree_on_failure(comm_, [&] {
    if (comm_.rank() != 0 || store_.latest_name().empty()) return;
    const std::string path = store_.dir() + "/" + store_.latest_name();
    CheckpointInfo theirs;
    try {
      theirs = read_checkpoint_info(path);
    } catch (const std::exception&) {
      return;  // damaged or locked: resuming would refuse it too; nothing to protect here
    }
    if (theirs.run_id.empty() || theirs.run_id == info_.run_id) return;
    refuse_lost_identity(path, theirs,
                         "with --restart to resume that run, or choose another checkpoint.dir "
                         "to start a new one");
    throw deck_error(config_, "checkpoint.dir",
                     store_.dir() + " holds the checkpoints of " + describe_run(theirs) +
                         ", and this " + describe_run(info_) +
                         " would write over them: choose another checkpoint.dir, resume that run "
                         "from its own run directory, or start from its weights with "
                         "--restart-from " +
                         path);
  });
}

int64_t Checkpointer::resume(const ResumeRequest& request) {
  if (replica_count_ != int(replicas_.more.size()) + 1)
    throw std::logic_error("checkpointer: resume before set_replicas");
  // Rank 0 finds the newest checkpoint that loads; the others then load that one. Each part is
  // local work followed by an agreement, so an error on any rank (the deck contradicts the
  // checkpoint, a damaged file, no memory) ends every rank with the same error, none waiting.
  std::vector<std::string> candidates;
  std::string chosen;
  int64_t step = -1;
  agree_on_failure(comm_, [&] {
    if (comm_.rank() != 0) return;
    if (request.from.empty()) {
      candidates = store_.candidates();
    } else {
      std::error_code ec;
      if (!std::filesystem::is_regular_file(request.from, ec))
        throw InputError("", 0, "--restart-from",
                         request.from + ": no such checkpoint file (" +
                             (ec ? ec.message() : std::string("not a regular file")) + ")");
      candidates = {request.from};
    }
    chosen = choose(candidates, request, &step);
  });
  broadcast_text(comm_, chosen, 0);
  comm_.broadcast_bytes(&step, sizeof step, 0);
  if (chosen.empty()) {
    log_.line("wavetrain: no checkpoint in %s: starting from step 0", store_.dir().c_str());
    return -1;
  }
  agree_on_failure(comm_, [&] {
    if (comm_.rank() == 0) return;
    try {
      load_checkpoint(chosen, model_, optimizer_, comm_.rank(), replicas_, comm_.size());
    } catch (const InputError& e) {
      throw InputError(chosen, 0, "",
                       "could not be loaded on rank " + std::to_string(comm_.rank()) +
                           " (rank 0 loaded it): " + e.what());
    }
  });
  if (candidates.empty() || chosen != candidates.front())
    log_.warning("fell back to the previous good checkpoint");
  log_.line("wavetrain: resumed from %s at step %lld", chosen.c_str(), (long long)step);
  return step;
}

}  // namespace wt

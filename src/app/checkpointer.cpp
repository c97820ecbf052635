#include "app/checkpointer.hpp"

#include <chrono>
#include <filesystem>
#include <stdexcept>

#include "deck/deck_parser.hpp"
#include "deck/input_error.hpp"

namespace wt {

namespace {

// The owner of a stage is the first rank that runs its optimizer Step: after a step its copy of
// the parameters and optimizer state is the authoritative one (every schedule keeps this so).
std::vector<int> stage_owners(const Program& program, size_t stages) {
  std::vector<int> owner(stages, -1);
  for (size_t r = 0; r < program.ranks.size(); ++r)
    for (const auto& stream : program.ranks[r].streams)
      for (const Instruction& ins : stream)
        if (ins.op == OpCode::Step && ins.stage >= 0 && size_t(ins.stage) < stages &&
            owner[ins.stage] < 0)
          owner[ins.stage] = int(r);
  for (int& o : owner)
    if (o < 0) o = 0;
  return owner;
}

}  // namespace

Checkpointer::Checkpointer(const RunConfig& config, const std::string& run_dir,
                           const Program& program, Model& model, Optimizer& optimizer,
                           int64_t batches_per_epoch, Communicator& comm, RunLog& log)
    : config_(config),
      store_((std::filesystem::path(run_dir) / config.checkpoint.dir).string(),
             config.checkpoint.keep),
      model_(model),
      optimizer_(optimizer),
      comm_(comm),
      log_(log),
      stage_owner_(stage_owners(program, model.stages.size())),
      replica_count_(program.replicas) {
  info_.global_batch = config.train.global_batch;
  info_.batches_per_epoch = batches_per_epoch;
  info_.world_size = comm.size();
  info_.seed = config.run.seed;
  info_.schedule = config.schedule.kind;
  info_.model = model.graph.name;
  info_.optimizer = config.optimizer.kind;
  // The cuts in use, automatic ones included: a resumed run keeps them (app/stage_choice.hpp).
  for (size_t s = 1; s < model.stages.size(); ++s) info_.cuts.push_back(model.stages[s].node_begin);
  info_.deck_toml = to_toml(config);
  if (comm.rank() == 0) std::filesystem::create_directories(store_.dir());
  comm.barrier();
}

double Checkpointer::save(int64_t step) {
  const auto t0 = std::chrono::steady_clock::now();
  info_.step = step;
  write_checkpoint(store_.temp_path(step), info_, model_, optimizer_, stage_owner_, MPI_COMM_WORLD,
                   replicas_);  // returns after the collective close
  if (comm_.rank() == 0) store_.commit(step);
  comm_.barrier();  // nobody starts the next checkpoint before `latest` names this one
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  log_.line("wavetrain: checkpoint %s written (%.2f s)",
            std::filesystem::path(store_.final_path(step)).filename().c_str(), seconds);
  return seconds;
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

int64_t Checkpointer::resume(bool required) {
  if (replica_count_ != int(replicas_.more.size()) + 1)
    throw std::logic_error("checkpointer: resume before set_replicas");
  // Rank 0 finds the newest checkpoint that loads; the others then load that one.
  std::string chosen, first_error, error_file, error_key;
  int64_t step = -1, tried = 0;
  bool mismatch = false;
  const std::vector<std::string> candidates = store_.candidates();
  if (comm_.rank() == 0) {
    for (const std::string& path : candidates) {
      ++tried;
      try {
        CheckpointInfo info = read_checkpoint_info(path);
        check_against_deck(path, info);
        load_checkpoint(path, model_, optimizer_, 0, replicas_, comm_.size());
        chosen = path;
        step = info.step;
        if (info.world_size != comm_.size())
          log_.line(
              "wavetrain: checkpoint written by %d rank%s, resuming on %d (global batch %lld "
              "unchanged)",
              info.world_size, info.world_size > 1 ? "s" : "", comm_.size(),
              (long long)config_.train.global_batch);
        break;
      } catch (const InputError& e) {
        if (first_error.empty()) {
          first_error = e.what();
          error_file = e.file();
          error_key = e.key();
        }
        // A deck mismatch is the user's to fix, not a damaged file to skip.
        if (e.key() == "train.global_batch" || e.key() == "run.seed" ||
            e.key() == "optimizer.kind" || e.key() == "data.path" || e.key() == "model" ||
            e.key() == "stages" || e.key() == "schedule.kind") {
          mismatch = true;
          break;
        }
        log_.line("wavetrain: warning: skipping unusable checkpoint: %s", e.what());
      }
    }
  }
  // Share the outcome: path (or the error to raise everywhere).
  std::string message = chosen.empty() ? first_error : chosen;
  int64_t header[4] = {chosen.empty() ? 0 : 1, int64_t(message.size()), tried, mismatch};
  comm_.broadcast_bytes(header, sizeof header, 0);
  message.resize(size_t(header[1]));
  if (header[1] > 0) comm_.broadcast_bytes(message.data(), header[1], 0);
  comm_.broadcast_bytes(&step, sizeof step, 0);

  if (header[0] == 0) {
    if (header[3]) {  // the deck contradicts the checkpoint: raise rank 0's error as it was
      std::string parts[2] = {error_file, error_key};
      for (std::string& part : parts) {
        int64_t n = int64_t(part.size());
        comm_.broadcast_bytes(&n, sizeof n, 0);
        part.resize(size_t(n));
        if (n) comm_.broadcast_bytes(part.data(), n, 0);
      }
      const std::string prefix = InputError::format(parts[0], 0, parts[1], "");
      throw InputError(parts[0], 0, parts[1],
                       message.substr(std::min(prefix.size(), message.size())));
    }
    if (!message.empty())  // there were checkpoints and none could be used
      throw InputError(
          store_.dir(), 0, "",
          "no usable checkpoint (" + std::to_string(header[2]) + " tried); newest: " + message);
    if (required)
      throw InputError(store_.dir(), 0, "--restart",
                       "no checkpoint to resume from (none written yet in this run directory)");
    log_.line("wavetrain: no checkpoint in %s: starting from step 0", store_.dir().c_str());
    return -1;
  }
  chosen = message;
  int ok = 1;
  if (comm_.rank() != 0) {
    try {
      load_checkpoint(chosen, model_, optimizer_, comm_.rank(), replicas_, comm_.size());
    } catch (const InputError& e) {
      ok = 0;
      first_error = e.what();
    }
  }
  double all_ok = ok;
  comm_.allreduce_sum(&all_ok, 1, 0);
  if (all_ok < comm_.size())
    throw InputError(chosen, 0, "",
                     "could not be loaded on every rank" +
                         (first_error.empty() ? std::string() : ": " + first_error));
  if (candidates.empty() || chosen != candidates.front())
    log_.line("wavetrain: fell back to the previous good checkpoint");
  log_.line("wavetrain: resumed from %s at step %lld", chosen.c_str(), (long long)step);
  return step;
}

}  // namespace wt

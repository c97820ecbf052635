#pragma once
// One checkpoint: an HDF5 file with everything a run needs to continue bit for bit.
//
//   /            attrs format="wavetrain-checkpoint", version, step (steps completed),
//                global_batch, batches_per_epoch, world_size, seed, schedule, model,
//                optimizer, stages, cuts (int64[stages-1]), stage_ranks (int64[stages], burst),
//                run_id and run_dir (the writing run's identity and directory; version >= 3)
//   /deck        uint8[]: the resolved deck (TOML text) the run was started with
//   /stages/<s>/values            float[n]       parameters (written by the stage's owner)
//   /stages/<s>/param_layout      uint8[]        JSON: each parameter's and buffer's name, offset
//                                                and shape (model/param_layout.hpp; absent in
//                                                files written before it; read by tools only)
//   /stages/<s>/buffers           float[W, nb]   non-trained state (batchnorm running stats),
//                                                one row per rank: ranks see different samples
//   /stages/<s>/optimizer/<name>  float[n]       optimizer state; attr step_count
// With several model replicas per rank (ticktock: one per wave; attr replicas = R > 1), replica
// w >= 1 is stored the same way under /replicas/<w>/stages/<s>/..., its optimizer state being
// the optimizer's stage key w * stages + s, and each wave's kept local gradient (Wavelet Eq. 1,
// carried from one step to the next) as
//   /kept/<w>/<s>                 float[W, n]    one row per rank (absent before the first step)
// Every dataset carries a `checksum` attribute (FNV-1a over its bytes), the root attributes a
// `header_checksum` over all of them, and each optimizer group's step_count a
// `step_count_checksum`, so a corrupted or edited file is rejected instead of silently loaded.
// Format version 1 files (before the header checksum) are still read, with a warning
// (CheckpointInfo::header_verified false): their header cannot be verified.
//
// There is no separate RNG state to store: every random draw is a pure function of
// (run.seed, global batch sequence, part) — dropout masks and the per-epoch shuffle alike — so
// the seed and `step` are the complete RNG state of every rank, and `step` is the data cursor.
//
// Writing is collective over an MPI communicator with MPI-parallel HDF5: all ranks create the
// datasets together, each stage's owner writes that stage, and every rank writes its own row of
// the per-rank buffers, so no rank gathers the whole model.
#include <mpi.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/model.hpp"
#include "ops/optimizers.hpp"
#include "util/input_error.hpp"

namespace wt {

struct CheckpointInfo {
  int64_t step = 0;  // optimizer steps completed; training resumes at this step
  int64_t global_batch = 0;
  int64_t batches_per_epoch = 0;
  int world_size = 1;
  uint64_t seed = 0;
  std::string schedule;
  std::string model;                  // the graph's name
  std::string optimizer;              // sgd | adamw
  std::vector<int64_t> stage_params;  // parameters per stage
  std::vector<int64_t> cuts;
  std::vector<int64_t> stage_ranks;  // burst: ranks running each stage (the plan); else empty
  std::string deck_toml;
  std::string run_id;           // the run that wrote it (job/run_identity.hpp); "" before version 3
  std::string run_dir;          // that run's directory when it wrote this (informational)
  int replicas = 1;             // model replicas per rank
  bool header_verified = true;  // false for a version-1 file: no header checksum to check
};

// A checkpoint write that failed on some rank, raised on every rank with the same text after
// the ranks agreed (write_checkpoint). reason(): the system's, e.g. "No space left on device".
class CheckpointWriteError : public std::runtime_error {
 public:
  CheckpointWriteError(const std::string& path, const std::string& reason)
      : std::runtime_error("cannot write checkpoint " + path + ": " + reason),
        path_(path),
        reason_(reason) {}
  const std::string& path() const { return path_; }
  const std::string& reason() const { return reason_; }

 private:
  std::string path_, reason_;
};

// A checkpoint another process holds locked (open for writing: HDF5's file lock): in use, not
// damaged. holder(): "process PID (COMMAND)", or "" when the system does not tell.
class CheckpointLockedError : public InputError {
 public:
  CheckpointLockedError(const std::string& path, const std::string& holder)
      : InputError(path, 0, "", "locked: " + holder + " (the file is in use, not damaged)"),
        holder_(holder) {}
  const std::string& holder() const { return holder_; }

 private:
  std::string holder_;
};

// What a rank holds beyond replica 0 when a schedule runs several replicas (ticktock).
struct ReplicaState {
  std::vector<Model*> more;  // replicas 1..R-1, built like replica 0
  // [replica][stage]: each wave's kept local gradient (undefined until first kept); may be null
  std::vector<std::vector<Tensor>>* kept = nullptr;
};

// Writes `path` (the caller renames it into place). stage_owner[s]: the world rank whose copy of
// stage s is authoritative. Collective over `comm`. A failed write (full disk, I/O error) on any
// rank throws CheckpointWriteError on every rank, with the same message, after the file has been
// closed collectively: no rank is left waiting. The caller removes the partial file.
void write_checkpoint(const std::string& path, const CheckpointInfo& info, Model& model,
                      Optimizer& optimizer, const std::vector<int>& stage_owner, MPI_Comm comm,
                      const ReplicaState& replicas = {});

// Reads the header. Throws wt::InputError naming the file and the dataset/attribute when the
// file is not a readable wavetrain checkpoint, CheckpointLockedError when another process holds it
// locked. Not collective.
CheckpointInfo read_checkpoint_info(const std::string& path);

// Loads parameters, buffers (row `rank` mod the writer's world size) and optimizer state into
// `model`/`optimizer` (and every replica of `replicas`), after checking that they match the
// checkpoint. Kept gradients: on the writer's world size each rank takes its own row; on another
// one rank 0 takes the sum of the rows and the others zeros, which leaves the allreduced Eq. 1
// update the same up to float rounding. Throws wt::InputError on any mismatch, missing dataset
// or checksum failure; the model may then be partly overwritten. Not collective.
void load_checkpoint(const std::string& path, Model& model, Optimizer& optimizer, int rank,
                     const ReplicaState& replicas = {}, int world = 1);

// The trained state alone, for using the model after training (--evaluate, --predict): replica
// 0's parameters and rank 0's buffers, checked as load_checkpoint checks them; no optimizer state.
// `model`: built with the checkpoint's cuts, every stage held. Not collective.
void load_checkpoint_weights(const std::string& path, Model& model);

}  // namespace wt

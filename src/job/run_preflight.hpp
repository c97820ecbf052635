#pragma once
// The checks that run before training, on every rank, with no collective call (train() runs them
// under agree_on_failure): bad input found here exits 2 at once, named, instead of failing hours
// later or hanging the ranks that did not see it.
#include <string>

#include "data/dataset_reader.hpp"
#include "deck/run_config.hpp"
#include "model/graph.hpp"
#include "sched/instruction.hpp"

namespace wt {

// The run directory exists (created if missing) and is a directory.
void create_run_directory(const std::string& dir);
// A file the run writes later must not be a directory or unwritable: found now, not after hours.
void check_writable_file(const std::string& path);
// deck.toml and the like: checked, then written atomically.
void write_file_checked(const std::string& path, const std::string& contents);

// The datasets fit the deck and the model: samples in each split, a global batch the training
// split can fill, the model's class count, a step count that cannot overflow.
void check_data_against_deck(const RunConfig& cfg, const Graph& graph, const DatasetReader& train,
                             const DatasetReader& test);

// A per-token loss reads T labels per sample; the split must hold exactly that many.
void check_labels_per_sample(const RunConfig& cfg, const Graph& graph, const DatasetReader& split);

// "10 classes: T-shirt/top, Trouser, ..." (the file's names, the first dozen), or "10 classes".
std::string describe_classes(const DatasetReader& split);

// No key the deck sets is one the chosen schedule ignores ([burst] under another schedule): a
// training run refuses it, naming the key, rather than run without it. (--show-plan plans burst
// for any deck, so this is not a deck-parser rule.)
void check_keys_the_schedule_reads(const RunConfig& cfg);

// device.kind = "cuda": the GPU this rank drives and whether other ranks of its node drive it too,
// or the deck error that says why it cannot run, naming the deck line: a build without CUDA; no
// GPU seen by this rank; ranks of a node sharing a GPU without device.share_gpus. Collective with
// CUDA (the node's ranks gather their GPUs' UUIDs): every rank calls it.
struct GpuPlacement {
  int gpu = 0;          // the device index this rank opens
  bool shared = false;  // other ranks of the node drive it too (their transfers: MPI, staged)
  std::string name;     // the GPU's name, for the log
};
GpuPlacement place_on_gpu(const RunConfig& cfg);
// device.kind = "auto" resolved (collective in CUDA builds): "cuda" where this build has CUDA and
// every rank of every node sees a GPU of its own (no two ranks of a node on one GPU), else
// "host"; `why` says which, for the log. Other kinds are returned as they are.
std::string resolve_device_kind(const RunConfig& cfg, std::string* why);
// device.kind is one this build can run (place_on_gpu's refusals for "cuda"; collective then).
void check_device_kind(const RunConfig& cfg);
// train.precision = "bf16" on a CPU device (host, strict) needs a CPU that oneDNN runs bf16 on
// natively (AVX512-BF16 or AMX): refused, naming the key, where it would be emulated.
void check_precision(const RunConfig& cfg);

// Every LoadBatch of the program gets at least one sample: the global batch is cut into at most
// that many parts (ranks, microbatches).
void check_program_batches(const RunConfig& cfg, const Program& program);

}  // namespace wt

#pragma once
// The validated, typed form of an input deck. The defaults are the initialisers below; every field
// has a schema entry (type, range, doc) in deck/schema.cpp. The resolved deck written to the run
// directory is this struct printed back as TOML (deck/deck_parser.hpp: to_toml).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "compress/weight_codec.hpp"
#include "ops/optimizer_options.hpp"
#include "sched/schedule_options.hpp"
#include "util/input_error.hpp"

namespace wt {

struct RunConfig {
  std::string deck_path;  // the file it came from
  // Where each key given was set (file, 1-based line; "" and 0 for --set), for errors found after
  // parsing (deck_error).
  struct KeyOrigin {
    std::string file;
    int line = 0;
  };
  std::map<std::string, KeyOrigin> key_origins;

  struct Run {
    std::string name = "run";  // parse_deck: the deck's file name without .toml, when not given
    std::string output_dir = "runs";  // the run directory is <output_dir>/<name>
    uint64_t seed = 1;
    bool deterministic = true;
    double progress_seconds = 5.0;  // rank 0 prints a progress line at most this often
  } run;

  struct Data {
    std::string path;  // HDF5 dataset (see ARCHITECTURE.md)
    std::string train_split = "train";
    std::string test_split = "test";
    bool shuffle = true;
    bool preload = true;                 // ScaleDNN: read the next batch while this one computes
    std::string distribution = "shard";  // shard (each rank its rows) | scatter (rank 0 reads all)
  } data;

  struct ModelSection {
    std::string file;  // models/<name>.toml; relative paths resolve against the deck
    // Fold ReLUs into the passes of the layers around them (model/fuse_epilogues.hpp).
    bool fuse_epilogues = true;
  } model;

  using Optimizer = OptimizerOptions;
  Optimizer optimizer;

  using LrSchedule = LrScheduleOptions;
  LrSchedule lr_schedule;

  using Schedule = ScheduleOptions;  // the generators' own options
  Schedule schedule;

  struct Train {
    int64_t epochs = 1;
    int64_t max_steps = 0;  // 0 = epochs * steps_per_epoch
    int64_t global_batch = 64;
    int64_t eval_batch = 256;
    bool eval_every_epoch = true;
    int64_t log_every_steps = 50;    // metrics rows
    std::string precision = "fp32";  // fp32 | bf16: the matrix products' inputs (ops/precision.hpp)
  } train;

  struct Checkpoint {
    std::string dir = "checkpoints";  // inside the run directory
    int64_t every_steps = 0;          // 0 = off
    double every_seconds = 0;         // 0 = off
    int64_t keep = 3;
    std::string restart = "never";  // never | auto
    // Save and stop with exit status 75 (resumable) when less than this many seconds of the
    // --walltime remain; the margin grows to two step times if steps are slower.
    double walltime_margin = 120;
  } checkpoint;

  struct Trace {
    bool enabled = false;
    int64_t start_step = 10;
    int64_t end_step = 20;
  } trace;

  struct Failure {
    std::string on_nonfinite = "stop";  // stop | skip: a NaN/Inf loss or gradient
    double stall_seconds = 600;         // report the late rank and stop; 0 = off
    std::string on_explosion = "warn";  // warn | stop | off: a loss far above its running average
    double explosion_factor = 10;       // "far": this many times the running average
  } failure;

  // schedule.kind = "auto": how the schedule is chosen (app/auto/auto_schedule.hpp).
  struct Auto {
    bool measure = false;         // run the top three candidates and keep the fastest measured
    int64_t measure_steps = 4;    // timed steps per measured candidate (after one warm-up)
    bool lossy = false;           // a candidate with the lossy weight codec may be chosen
    double memory_margin = 1.25;  // a candidate fits when its predicted peak x this is within
                                  // device.memory_limit (the allocator's fragmentation, workspaces)
  } automatic;

  // DeepPool's burst planner (plan/burst_planner.hpp).
  struct Burst {
    double amp_limit = 2.0;        // GPU-second amplification a unit may reach (99 = no limit)
    double amp_exempt_s = 300e-6;  // units faster than this on one rank are never limited
    std::vector<int64_t> ranks;    // a forced plan: the rank count of every node; [] = planned
    std::string cost_model = "executor";  // executor | deeppool (pricing/burst_costs.hpp)
  } burst;

  // Waterwave's co-location: several decks' jobs on this deck's device (app/colocated_training).
  struct Colocate {
    std::vector<std::string> decks;         // the jobs' decks, relative to this deck's directory
    int64_t split_bytes = 0;                // node-group size; 0 = chosen by simulation
    std::string partition = "split";        // split | peak | turn (plan/node_groups.hpp)
    std::string pairing = "bytes";          // bytes | index (plan/colocate_plan.hpp)
    std::string pair_order = "interleave";  // interleave | alloc_first: inside a pair
    std::string sharing = "nodegroups";     // nodegroups | unordered | temporal (baselines)
  } colocate;

  // DeepPool's multiplexing: a local background job in this job's idle time on every rank
  // (app/background_training.hpp).
  struct Background {
    std::string deck;                    // the background job's deck; "" = none
    double tasklet_ms = 0.5;             // pacing: a tasklet's node range, by profiled time
    int64_t depth = 1;                   // tasklets per idle check
    double slowdown_target = 1.1;        // feedback: hold while an instruction's average is above
    double ewma_fast = 1.0;              // the average's weight of a run above the target
    double ewma_slow = 0.1;              // ... and of a run below it
    double recv_min_ms = 0.5;            // a receive expected longer than this admits anyway
    bool block_during_allreduce = true;  // never while a foreground allreduce is in flight
    bool block_during_send = true;       // never while a foreground send is in flight
    int64_t warmup_steps = 3;            // foreground steps alone: the instructions' solo times
    int64_t memory_limit = 0;            // the background's sub-budget in bytes; 0 = none
    bool priority = true;                // ablation: false = an equal-priority stream
    bool pacing = true;                  // ablation: false = a whole background step at a time
    bool feedback = false;               // the paper's per-wait slowdown gate (deeppool)
    bool fit_to_wait = false;            // tasklets end before the wait is expected to
    // foreground_first: fit_to_wait, micro-batches and the whole-run budget; deeppool: the
    // paper's multiplexing alone (the ablation).
    std::string policy = "foreground_first";
    int64_t microbatches = 0;    // the background batch's split; 0 = by its longest node
    int64_t solo_every = 25;     // foreground_first: one step in this many runs alone (solo time)
    bool split_backward = true;  // foreground_first: a convolution's backward as dx, then dw
  } background;

  // ScaleDNN's lossy codec on the weights a stage owner broadcasts (compress/weight_codec.hpp).
  WeightCodec compress;

  struct Device {
    std::string kind = "auto";      // auto | cpu | host | strict | cuda
    int64_t memory_limit = 0;       // bytes; 0 = unlimited
    int64_t strict_seed = 1;        // the strict device's stream order (plus the rank)
    int64_t release_threshold = 0;  // bytes reserved above which cached segments go back; 0 = off
    int64_t max_split_bytes = 0;    // cached blocks larger than this are never split; 0 = off
    bool share_gpus = false;        // cuda: several ranks of a node may drive one GPU
    bool tf32 = false;              // cuda: TF32 tensor cores for FP32 products
    std::string conv_algorithm = "auto";  // host, strict: auto (Winograd where it applies) | direct
    bool cuda_graphs = false;             // strict, cuda: each step after the first replays a graph
    bool overlap_steps = true;            // with cuda_graphs: issue a step while the last one runs
  } device;
};

// An error about a deck key found after parsing (a plan that cannot run, a batch that does not
// divide), naming the file and line that set the key, or the command line's --set.
inline InputError deck_error(const RunConfig& config, const std::string& key,
                             const std::string& message) {
  auto it = config.key_origins.find(key);
  if (it == config.key_origins.end()) return InputError(config.deck_path, 0, key, message);
  return InputError(it->second.file, it->second.line, key, message);
}

}  // namespace wt

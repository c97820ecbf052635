#include "deck/schema.hpp"

#include "sched/schedule_registry.hpp"

namespace wt {

// A captureless lambda returning a pointer to one RunConfig field.
#define WT_FIELD(member) [](RunConfig& c) -> FieldRef { return &c.member; }

KeyDef KeyDef::in(Range r) const {
  KeyDef copy = *this;
  copy.range = r;
  return copy;
}

KeyDef KeyDef::one_of(std::vector<std::string> values) const {
  KeyDef copy = *this;
  copy.allowed = std::move(values);
  return copy;
}

KeyDef KeyDef::required_file() const {
  KeyDef copy = *this;
  copy.required = true;
  copy.path = PathBase::Deck;
  return copy;
}

KeyDef KeyDef::file() const {
  KeyDef copy = *this;
  copy.path = PathBase::Deck;
  return copy;
}

static KeyDef key(const char* section, const char* name, FieldRef (*field)(RunConfig&),
                  const char* doc) {
  KeyDef def;
  def.section = section;
  def.key = name;
  def.field = field;
  def.doc = doc;
  return def;
}

namespace {

// The keys of the run and its data and model.
std::vector<KeyDef> run_keys() {
  return {
      // [run]
      key("run", "name", WT_FIELD(run.name),
          "run name, one file name (no '/', at most 255 bytes); the run directory is "
          "<output_dir>/<name>; not given: the deck's file name without .toml (\"run\" only for a "
          "deck read from no file)"),
      key("run", "output_dir", WT_FIELD(run.output_dir),
          "directory holding run directories (relative to the launch directory)"),
      key("run", "seed", WT_FIELD(run.seed), "seed for initialisation, shuffling and dropout")
          .in(Range::at_least(0)),
      key("run", "deterministic", WT_FIELD(run.deterministic),
          "bitwise reproducible runs (fixed reduction order)"),
      key("run", "progress_seconds", WT_FIELD(run.progress_seconds),
          "rank 0 prints a progress line at most this often (seconds)")
          .in(Range::above(0)),
      // [data]
      key("data", "path", WT_FIELD(data.path),
          "HDF5 dataset file (relative paths resolve against the deck's directory)")
          .required_file(),
      key("data", "train_split", WT_FIELD(data.train_split), "HDF5 group of the training split"),
      key("data", "test_split", WT_FIELD(data.test_split), "HDF5 group of the test split"),
      key("data", "shuffle", WT_FIELD(data.shuffle), "reshuffle the training set every epoch"),
      key("data", "preload", WT_FIELD(data.preload),
          "read the next batch while the current one computes"),
      key("data", "distribution", WT_FIELD(data.distribution),
          "shard: each rank reads its own rows (ScaleDNN); scatter: rank 0 reads the whole batch "
          "and scatters the parts (the master path it improves on; data-parallel gang only)")
          .one_of({"shard", "scatter"}),
      // [model]
      key("model", "file", WT_FIELD(model.file),
          "model description TOML (relative paths resolve against the deck's directory)")
          .required_file(),
      key("model", "fuse_epilogues", WT_FIELD(model.fuse_epilogues),
          "apply each ReLU in the output pass of the conv2d/linear before it and its mask in a "
          "neighbour's backward pass (same arithmetic, bitwise the same losses); false: run them "
          "as the model file's separate layers (the ablation)"),
  };
}

// The keys of the optimizer and its learning-rate schedule.
std::vector<KeyDef> optimizer_keys() {
  return {
      // [optimizer]
      key("optimizer", "kind", WT_FIELD(optimizer.kind), "optimizer").one_of({"sgd", "adamw"}),
      key("optimizer", "lr", WT_FIELD(optimizer.lr), "peak learning rate").in(Range::above(0)),
      key("optimizer", "momentum", WT_FIELD(optimizer.momentum), "sgd: momentum factor")
          .in(Range{0, 1, false, true}),
      key("optimizer", "weight_decay", WT_FIELD(optimizer.weight_decay),
          "sgd: L2 added to the gradient; adamw: decoupled decay")
          .in(Range::at_least(0)),
      key("optimizer", "nesterov", WT_FIELD(optimizer.nesterov),
          "sgd: Nesterov momentum (needs momentum > 0)"),
      key("optimizer", "beta1", WT_FIELD(optimizer.beta1), "adamw: first-moment decay")
          .in(Range{0, 1, false, true}),
      key("optimizer", "beta2", WT_FIELD(optimizer.beta2), "adamw: second-moment decay")
          .in(Range{0, 1, false, true}),
      key("optimizer", "eps", WT_FIELD(optimizer.eps), "adamw: denominator term")
          .in(Range::above(0)),
      // [lr_schedule]
      key("lr_schedule", "kind", WT_FIELD(lr_schedule.kind), "learning-rate schedule")
          .one_of({"constant", "step", "cosine"}),
      key("lr_schedule", "warmup_steps", WT_FIELD(lr_schedule.warmup_steps),
          "linear warmup from 0 to lr over this many steps (all kinds)")
          .in(Range::at_least(0)),
      key("lr_schedule", "step_size", WT_FIELD(lr_schedule.step_size),
          "step: multiply the lr by gamma every step_size steps")
          .in(Range::at_least(1)),
      key("lr_schedule", "gamma", WT_FIELD(lr_schedule.gamma), "step: decay factor")
          .in(Range{0, 1, true, false}),
      key("lr_schedule", "min_lr", WT_FIELD(lr_schedule.min_lr),
          "cosine: the lr reached at the last step (<= optimizer.lr)")
          .in(Range::at_least(0)),
  };
}

// The keys of the parallel schedule and the burst planner.
std::vector<std::string> schedule_kinds_and_auto() {
  std::vector<std::string> kinds = ScheduleRegistry::known_kinds();
  kinds.push_back("auto");
  return kinds;
}

std::vector<KeyDef> schedule_keys() {
  return {
      // [schedule]
      // The allowed kinds are whatever generators registered themselves (WT_REGISTER_SCHEDULE), so
      // a new schedule is one generator file and nothing else. The schema is built on first use,
      // after static registration.
      key("schedule", "kind", WT_FIELD(schedule.kind),
          "parallel schedule; auto = the simulator ranks every schedule on this run's ranks, "
          "device and memory limit and the fastest that fits trains (auto.csv in the run "
          "directory)")
          .one_of(schedule_kinds_and_auto()),
      key("schedule", "bucket_bytes", WT_FIELD(schedule.bucket_bytes),
          "gradient allreduce bucket size in bytes")
          .in(Range::at_least(1)),
      key("schedule", "microbatches", WT_FIELD(schedule.microbatches),
          "microbatches per batch (pipeline schedules)")
          .in(Range::at_least(1)),
      key("schedule", "cuts", WT_FIELD(schedule.cuts),
          "first node index of every stage after the first, increasing; [] = automatic")
          .in(Range::at_least(1)),
      key("schedule", "balance", WT_FIELD(schedule.balance),
          "automatic cuts balance the profiled forward+backward time per stage (profile; cached "
          "as profile.h5 in the run directory) or the FLOPs (flops)")
          .one_of({"profile", "flops"}),
      key("schedule", "wave_offset", WT_FIELD(schedule.wave_offset),
          "ticktock: the tock wave's forward starts when the tick's ends, overlapping the tick's "
          "backward (Wavelet); false = both waves in lockstep, forwards then backwards"),
      key("schedule", "gang_sync", WT_FIELD(schedule.gang_sync),
          "gang: allreduce (every rank steps) or master (ScaleDNN's baseline, PyTorch "
          "DataParallel: gradients reduced to rank 0, rank 0 steps and broadcasts the model)")
          .one_of({"allreduce", "master"}),
      // [burst]
      key("burst", "amp_limit", WT_FIELD(burst.amp_limit),
          "burst planner: the GPU-second amplification (device time over the single-rank time) "
          "a unit may reach when it runs on more ranks; soft, as in DeepPool; 99 = no limit")
          .in(Range::above(0)),
      key("burst", "amp_exempt_s", WT_FIELD(burst.amp_exempt_s),
          "burst planner: units faster than this on one rank (seconds) are never limited")
          .in(Range::at_least(0)),
      key("burst", "ranks", WT_FIELD(burst.ranks),
          "a forced burst plan instead of the planner's: the rank count of every node, in order "
          "(a follower and a residual block's nodes take their unit's count); [] = planned")
          .in(Range::at_least(1)),
      key("burst", "cost_model", WT_FIELD(burst.cost_model),
          "burst planner's pricing: executor (gradient sync per segment in schedule.bucket_bytes "
          "buckets, overlapped with backward, as the executor and the simulator run it) or "
          "deeppool (DeepPool's public planner: sync without latency, its admission rule)")
          .one_of({"executor", "deeppool"}),
      // [compress]
      key("compress", "weights", WT_FIELD(compress.kind),
          "ScaleDNN's lossy codec on the weights a stage owner broadcasts (waves): none, "
          "scalednn (3 values in 32 bits), bf16")
          .one_of({"none", "scalednn", "bf16"}),
      key("compress", "min_bytes", WT_FIELD(compress.min_bytes),
          "stages with fewer parameter bytes are broadcast exact")
          .in(Range::at_least(0)),
      key("compress", "out_of_range", WT_FIELD(compress.out_of_range),
          "scalednn triples the format cannot hold within 2^-5 (zeros, |x| >= 2, mixed "
          "exponents): raw = sent exact in a side list; paper = the published rule (crushed)")
          .one_of({"raw", "paper"}),
      key("compress", "rounding", WT_FIELD(compress.rounding), "truncate (the paper) or nearest")
          .one_of({"truncate", "nearest"}),
  };
}

// [colocate]: Waterwave's co-location of several jobs on one device.
std::vector<KeyDef> colocate_keys() {
  return {
      key("colocate", "decks", WT_FIELD(colocate.decks),
          "Waterwave: train these decks' jobs together on this deck's device (relative to this "
          "deck's directory), each into <run dir>/<its run.name>/; [] = this deck's own job"),
      key("colocate", "split_bytes", WT_FIELD(colocate.split_bytes),
          "node-group size in bytes (the allocation a group adds or frees); 0 = chosen by "
          "simulating the paired round at 1/32 .. 1 of the largest job's forward allocation "
          "against the budget: the split at which the largest batch fits")
          .in(Range::at_least(0)),
      key("colocate", "partition", WT_FIELD(colocate.partition),
          "how a job's step is cut into node groups: split = by split_bytes (Waterwave); peak = "
          "two groups, cut at the step's memory peak; turn = two groups, forward and backward "
          "(the two Waterwave-s)")
          .one_of({"split", "peak", "turn"}),
      key("colocate", "pairing", WT_FIELD(colocate.pairing),
          "how groups are paired: bytes = a group beside the other job's only where the round's "
          "memory (the budget, else one job at a time) allows; index = the paper's Algorithm 1")
          .one_of({"bytes", "index"}),
      key("colocate", "pair_order", WT_FIELD(colocate.pair_order),
          "inside a pair: interleave = the two groups an instruction each in turn (a GPU "
          "host's order); alloc_first = the allocating stream's group first")
          .one_of({"interleave", "alloc_first"}),
      key("colocate", "sharing", WT_FIELD(colocate.sharing),
          "nodegroups = Waterwave's paired rounds; the baselines: unordered = the jobs' "
          "instructions in turn with no node groups (spatial sharing), temporal = whole steps "
          "in turn")
          .one_of({"nodegroups", "unordered", "temporal"}),
  };
}

// schedule.kind = "auto" (app/auto/auto_schedule.hpp).
std::vector<KeyDef> auto_keys() {
  return {
      key("auto", "measure", WT_FIELD(automatic.measure),
          "run the three fastest predicted candidates for auto.measure_steps real steps each "
          "and train the fastest measured one (prediction against measurement in auto.csv)"),
      key("auto", "measure_steps", WT_FIELD(automatic.measure_steps),
          "steps timed per measured candidate, after one warm-up step")
          .in(Range::at_least(1)),
      key("auto", "memory_margin", WT_FIELD(automatic.memory_margin),
          "a candidate fits when its predicted peak memory times this is within "
          "device.memory_limit: the simulator counts weights, gradients, optimizer state, "
          "activations and a backward's working set, not the allocator's fragmentation, the "
          "kernels' workspaces or the data pipeline's buffers (measured here: bytes in use 0.91 "
          "to 1.10 times its prediction)")
          .in(Range::at_least(1)),
      key("auto", "lossy", WT_FIELD(automatic.lossy),
          "auto may choose a candidate with ScaleDNN's lossy weight codec (it trains a "
          "slightly different model); false = ranked, never chosen"),
  };
}

// DeepPool's foreground/background multiplexing (app/background_training.hpp): the job, its
// pacing and its gates.
std::vector<KeyDef> background_keys() {
  return {
      key("background", "deck", WT_FIELD(background.deck),
          "DeepPool multiplexing: every rank also trains this deck's local one-rank job in this "
          "job's idle time, into <run dir>/background/rank_<r>/ (relative to this deck's "
          "directory); \"\" = none")
          .file(),
      key("background", "tasklet_ms", WT_FIELD(background.tasklet_ms),
          "pacing: the background step is cut into tasklets of at most this many profiled "
          "milliseconds (a single longer node is its own tasklet, warned about at start)")
          .in(Range::above(0)),
      key("background", "depth", WT_FIELD(background.depth),
          "pacing: tasklets run before the foreground's events are checked again")
          .in(Range::at_least(1)),
      key("background", "slowdown_target", WT_FIELD(background.slowdown_target),
          "the foreground's allowed slowdown: foreground_first's run budget keeps its whole run "
          "within this times its steps alone; feedback = true also holds background work while "
          "the foreground waits in an instruction whose running average is above this times its "
          "solo time")
          .in(Range::above(1)),
      key("background", "ewma_fast", WT_FIELD(background.ewma_fast),
          "feedback: the average's weight of a run above the target (1 = react at once)")
          .in(Range{0, 1, true, false}),
      key("background", "ewma_slow", WT_FIELD(background.ewma_slow),
          "feedback: the average's weight of a run at or below the target (relaxes slowly)")
          .in(Range{0, 1, true, false}),
      key("background", "recv_min_ms", WT_FIELD(background.recv_min_ms),
          "a foreground wait on a receive whose solo time is above this many milliseconds "
          "admits background work whatever the feedback says")
          .in(Range::at_least(0)),
      key("background", "block_during_allreduce", WT_FIELD(background.block_during_allreduce),
          "never run background work while a foreground allreduce is in flight (it progresses "
          "only inside MPI calls, so background work would stretch it)"),
      key("background", "block_during_send", WT_FIELD(background.block_during_send),
          "never run background work while a foreground send is in flight (its peer waits for "
          "it, and on a CPU a large message moves only while the sender is inside MPI)"),
      key("background", "warmup_steps", WT_FIELD(background.warmup_steps),
          "foreground steps run alone first; their instruction times are the solo times")
          .in(Range::at_least(1)),
      key("background", "memory_limit", WT_FIELD(background.memory_limit),
          "the background job's share of device.memory_limit in bytes (its out-of-memory drops "
          "that background step, never the foreground); 0 = no share of its own")
          .in(Range::at_least(0)),
  };
}

// The background's policy and the ablations of DeepPool's mechanisms.
std::vector<KeyDef> background_policy_keys() {
  return {
      key("background", "priority", WT_FIELD(background.priority),
          "ablation: false = the background runs as an equal-priority stream (an instruction of "
          "each in turn)"),
      key("background", "pacing", WT_FIELD(background.pacing),
          "ablation: false = no tasklets, a whole background step at a time"),
      key("background", "feedback", WT_FIELD(background.feedback),
          "the paper's per-wait slowdown feedback (background work held while the foreground "
          "waits in an instruction whose running average is above slowdown_target x its solo "
          "time); off by default: foreground_first's run budget keeps the whole run within "
          "slowdown_target, and the per-wait hold starved the background on top of it; the "
          "paper's multiplexing is policy = \"deeppool\" with feedback = true"),
      key("background", "fit_to_wait", WT_FIELD(background.fit_to_wait),
          "a tasklet also ends before the foreground's wait is expected to end (its solo time "
          "less the time waited), so no node runs over the foreground's next instruction; not "
          "in the paper: off = DeepPool's tasklets alone"),
      key("background", "policy", WT_FIELD(background.policy),
          "foreground_first: no background node starts unless it ends inside the foreground's "
          "expected idle time (fit_to_wait), a background with nodes longer than tasklet_ms runs "
          "as micro-batches, and background work pauses whenever the foreground's whole-run "
          "slowdown is above slowdown_target; deeppool: the paper's multiplexing alone (with "
          "feedback = true for its slowdown feedback)")
          .one_of({"foreground_first", "deeppool"}),
      key("background", "microbatches", WT_FIELD(background.microbatches),
          "the background's global batch cut into this many micro-batches, gradients "
          "accumulated (the same model); 0 = foreground_first chooses (its longest profiled "
          "node fits tasklet_ms, then half of each rank's longest wait after the warm-up; a "
          "rank where even the tasklet's split does not fit leaves its background out), 1 "
          "under deeppool")
          .in(Range::at_least(0)),
      key("background", "solo_every", WT_FIELD(background.solo_every),
          "foreground_first: one foreground step in this many runs without background work, "
          "keeping the solo step time the whole-run budget compares with current")
          .in(Range::at_least(2)),
      key("background", "split_backward", WT_FIELD(background.split_backward),
          "foreground_first: a background node's backward that splits (a convolution's) runs as "
          "two nodes, the input's gradient and then the weights', each about half as long, so "
          "more of them fit the foreground's idle time; the same arithmetic (the same model); "
          "false = whole passes (ignored under deeppool)"),
  };
}

// The keys of training and checkpoints.
std::vector<KeyDef> train_keys() {
  return {
      // [train]
      key("train", "epochs", WT_FIELD(train.epochs), "passes over the training set")
          .in(Range::at_least(1)),
      key("train", "max_steps", WT_FIELD(train.max_steps),
          "stop after this many steps; 0 = epochs * steps_per_epoch")
          .in(Range::at_least(0)),
      key("train", "global_batch", WT_FIELD(train.global_batch),
          "samples per optimizer step, summed over all ranks")
          .in(Range::at_least(1)),
      key("train", "eval_batch", WT_FIELD(train.eval_batch),
          "samples per evaluation batch on each rank (bounds evaluation memory)")
          .in(Range::at_least(1)),
      key("train", "eval_every_epoch", WT_FIELD(train.eval_every_epoch),
          "evaluate on the test split after every epoch"),
      key("train", "log_every_steps", WT_FIELD(train.log_every_steps),
          "write a metrics row every this many steps")
          .in(Range::at_least(1)),
      key("train", "precision", WT_FIELD(train.precision),
          "fp32: FP32 throughout; bf16: GEMM and convolution inputs rounded to bfloat16 with FP32 "
          "accumulation and outputs (PyTorch's autocast); parameters, optimizer state and the "
          "loss stay FP32, and checkpoints are the same either way")
          .one_of({"fp32", "bf16"}),
      // [checkpoint]
      key("checkpoint", "dir", WT_FIELD(checkpoint.dir),
          "checkpoint directory, relative to the run directory"),
      key("checkpoint", "every_steps", WT_FIELD(checkpoint.every_steps),
          "write a checkpoint every this many steps; 0 = off")
          .in(Range::at_least(0)),
      key("checkpoint", "every_seconds", WT_FIELD(checkpoint.every_seconds),
          "write a checkpoint every this many seconds; 0 = off")
          .in(Range::at_least(0)),
      key("checkpoint", "keep", WT_FIELD(checkpoint.keep), "keep the newest this many checkpoints")
          .in(Range::at_least(1)),
      key("checkpoint", "restart", WT_FIELD(checkpoint.restart),
          "auto: resume from the latest checkpoint in the run directory")
          .one_of({"never", "auto"}),
      key("checkpoint", "walltime_margin", WT_FIELD(checkpoint.walltime_margin),
          "with --walltime: save and exit 75 when fewer seconds than this remain")
          .in(Range::at_least(0)),
  };
}

// The keys of traces, failure handling and the device.
std::vector<KeyDef> runtime_keys() {
  return {
      // [trace]
      key("trace", "enabled", WT_FIELD(trace.enabled), "write an HDF5 event trace"),
      key("trace", "start_step", WT_FIELD(trace.start_step), "first traced step")
          .in(Range::at_least(0)),
      key("trace", "end_step", WT_FIELD(trace.end_step), "last traced step + 1 (> start_step)")
          .in(Range::at_least(0)),
      // [failure]
      key("failure", "on_nonfinite", WT_FIELD(failure.on_nonfinite),
          "a NaN or Inf loss/gradient: stop the run, or skip the step and count it")
          .one_of({"stop", "skip"}),
      key("failure", "on_explosion", WT_FIELD(failure.on_explosion),
          "a training loss (a metrics row's mean over all ranks) above explosion_factor times its "
          "running average: warn, stop the run (exit 4, like a NaN), or off")
          .one_of({"warn", "stop", "off"}),
      key("failure", "explosion_factor", WT_FIELD(failure.explosion_factor),
          "how many times its running average a training loss may reach before on_explosion")
          .in(Range::above(1)),
      key("failure", "stall_seconds", WT_FIELD(failure.stall_seconds),
          "a collective waiting longer than this reports the late rank and stops; 0 = off")
          .in(Range::at_least(0)),
      // [device]
      key("device", "kind", WT_FIELD(device.kind),
          "device per rank: auto = cuda where every rank has a GPU of its own, else the host; cpu "
          "or host = a CPU core; strict = the host's kernels under a "
          "GPU's rules (finds ordering bugs); cuda = an NVIDIA GPU per rank (needs a build with "
          "CUDA; rank i of a node drives its visible GPU i modulo their number)")
          .one_of({"auto", "cpu", "host", "strict", "cuda"}),
      key("device", "tf32", WT_FIELD(device.tf32),
          "cuda: let cuBLAS and cuDNN use TF32 tensor cores for FP32 products (about 10 bits of "
          "mantissa in the products); off: FP32 throughout, as the host"),
      key("device", "conv_algorithm", WT_FIELD(device.conv_algorithm),
          "host, strict: auto = Winograd F(2x2, 5x5) for 5x5 stride-1 FP32 convolutions whose "
          "channel counts are multiples of 16, in builds with AVX or wider vectors (wavetrain "
          "--version says; LeNet's conv2 1.4x faster; results differ from the direct "
          "convolution's in the last bits), oneDNN's direct convolution for the rest; direct = "
          "never Winograd, the arithmetic of earlier versions (cuda: cuDNN picks its own)")
          .one_of({"auto", "direct"}),
      key("device", "cuda_graphs", WT_FIELD(device.cuda_graphs),
          "strict, cuda: capture the second step's device work as a graph and replay it for "
          "later steps (the launches of a step cost one); jobs that communicate, read labels by "
          "rows (burst) or share the device run eagerly, logged"),
      key("device", "overlap_steps", WT_FIELD(device.overlap_steps),
          "with cuda_graphs: the host issues the next step while the device still runs a "
          "replayed one (the step's pinned inputs alternate between two sets) and reads each "
          "step's results one step late, except before a log line, checkpoint or evaluation; "
          "not for jobs that communicate or skip non-finite updates; off: each step's results "
          "are read before the next step is issued"),
      key("device", "share_gpus", WT_FIELD(device.share_gpus),
          "cuda: let several ranks of a node drive one GPU (NCCL refuses one device twice in a "
          "communicator, so their transfers go through MPI over pinned host memory); off: such "
          "a launch is refused, naming the ranks and the GPU"),
      key("device", "strict_seed", WT_FIELD(device.strict_seed),
          "strict device: seed of the order in which streams run (each rank adds its rank)")
          .in(Range::at_least(0)),
      key("device", "memory_limit", WT_FIELD(device.memory_limit),
          "device memory budget per rank in bytes; 0 = unlimited")
          .in(Range::at_least(0)),
      key("device", "release_threshold", WT_FIELD(device.release_threshold),
          "reserved bytes per rank above which the allocator returns cached segments to the "
          "system before it reserves more (each return is a synchronising cudaFree on a GPU); "
          "0 = off: only when an allocation would otherwise fail")
          .in(Range::at_least(0)),
      key("device", "max_split_bytes", WT_FIELD(device.max_split_bytes),
          "cached blocks larger than this many bytes are never split for a smaller request "
          "(PyTorch's max_split_size_mb, against fragmentation); 0 = off")
          .in(Range::at_least(0)),
  };
}

}  // namespace

const std::vector<KeyDef>& deck_schema() {
  static const std::vector<KeyDef> schema = [] {
    std::vector<KeyDef> all;
    for (auto part : {run_keys, optimizer_keys, schedule_keys, colocate_keys, auto_keys,
                      background_keys, background_policy_keys, train_keys, runtime_keys}) {
      std::vector<KeyDef> keys = part();
      all.insert(all.end(), keys.begin(), keys.end());
    }
    return all;
  }();
  return schema;
}

#undef WT_FIELD

}  // namespace wt

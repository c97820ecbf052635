#include "job/job.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "comm/failure_agreement.hpp"
#include "data/eval_loader.hpp"
#include "data/scatter_batch_source.hpp"
#include "deck/deck_parser.hpp"
#include "exec/schedule_input.hpp"
#include "job/burst_choice.hpp"
#include "job/dataset_agreement.hpp"
#include "job/earlier_run.hpp"
#include "job/run_preflight.hpp"
#include "job/stage_choice.hpp"
#include "mem/caching_allocator.hpp"
#include "model/block_channels.hpp"
#include "model/fuse_epilogues.hpp"
#include "ops/lr_schedule.hpp"
#include "sched/job_placement.hpp"
#include "sched/schedule_registry.hpp"
#include "sched/stage_residency.hpp"
#include "util/input_error.hpp"

namespace wt {

std::string run_directory(const RunConfig& config, const JobOptions& options) {
  if (!options.run_dir.empty()) return options.run_dir;
  return (std::filesystem::path(config.run.output_dir) / config.run.name).string();
}

namespace {

// Whole-step graphs on every rank of a communicating program or on none: NCCL requires a
// collective to be captured on all its ranks or on none. Collective over the world.
std::string agree_on_graphs(Communicator& comm, const std::string& why_not) {
  double refusing = why_not.empty() ? 0.0 : 1.0;
  comm.allreduce_sum(&refusing, 1, 0);
  if (!why_not.empty() || refusing == 0.0) return why_not;
  return std::to_string(int(refusing)) +
         " other rank(s) cannot have them, and a collective must be graphed on all its ranks or "
         "on none";
}

// The strict queues' form of a planted bug in the device glue; None for any other bug.
StrictStreams::GlueBug glue_bug_of(PlantedBug bug) {
  switch (bug) {
    case PlantedBug::CommNotGated:
      return StrictStreams::GlueBug::CommNotGated;
    case PlantedBug::RecordDoneAtIssue:
      return StrictStreams::GlueBug::RecordDoneAtIssue;
    case PlantedBug::CompletionAfterDone:
      return StrictStreams::GlueBug::CompletionAfterDone;
    case PlantedBug::CaptureForksNone:
      return StrictStreams::GlueBug::CaptureForksNone;
    case PlantedBug::CommNotJoined:
      return StrictStreams::GlueBug::CommNotJoined;
    case PlantedBug::PolledInGraph:
      return StrictStreams::GlueBug::PolledInGraph;
    default:
      return StrictStreams::GlueBug::None;
  }
}

// The model file's graph, with its ReLUs folded into their neighbours and, on a device whose
// kernels take them, its activations channel-blocked between the layers that compute so, unless
// the deck says not; `fusions`, when given, receives how many of each there were.
struct Fusions {
  int relus = 0, blocked_tensors = 0;
};
Graph load_training_graph(const RunConfig& config, const OpsBackend& ops,
                          Fusions* fusions = nullptr) {
  Graph graph = Graph::load(config.model.file);
  Fusions done;
  if (config.model.fuse_epilogues) {
    done.relus = fuse_epilogues(graph);
    if (ops.takes_blocked_activations()) done.blocked_tensors = block_channels(graph);
  }
  if (fusions) *fusions = done;
  return graph;
}

// Per node: whether its Backward may run in halves, a layer that splits it whose input's
// gradient is computed (otherwise the input's half would do nothing).
std::vector<char> backward_halves(const Graph& graph) {
  const std::vector<char> needed = graph.output_gradient_needed();
  std::vector<char> halves(graph.nodes.size(), 0);
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& node = graph.nodes[i];
    if (!node.layer->splits_backward()) continue;
    for (int src : node.inputs)
      if (src != kGraphInput && needed[size_t(src)]) halves[i] = 1;
  }
  return halves;
}

}  // namespace

Job::Job(const RunConfig& config, const JobOptions& options, DeviceContext& device, int rank,
         int ranks)
    : config_(config),
      options_(options),
      device_(device),
      root_(rank == 0),
      log_(rank == 0, options.quiet) {
  (void)ranks;
  log_.set_prefix(options.log_prefix);
  check_device_kind(config_);
  check_precision(config_);
  check_keys_the_schedule_reads(config_);
  Fusions fusions;
  graph_ = std::make_unique<Graph>(load_training_graph(config_, device_.ops(), &fusions));
  fused_relus_ = fusions.relus;
  blocked_tensors_ = fusions.blocked_tensors;
  const Graph& graph = *graph_;
  train_reader_ = std::make_unique<DatasetReader>(config_.data.path, config_.data.train_split,
                                                  graph.input_shape, graph.classes);
  test_reader_ = std::make_unique<DatasetReader>(config_.data.path, config_.data.test_split,
                                                 graph.input_shape, graph.classes);
  labels_per_sample_ = graph.nodes.back().layer->labels_per_sample();
  for (const DatasetReader* r : {train_reader_.get(), test_reader_.get()})
    check_labels_per_sample(config_, graph, *r);
  check_data_against_deck(config_, graph, *train_reader_, *test_reader_);
  dataset_digest_ = dataset_digest(*train_reader_, *test_reader_);
  // An empty test split leaves nothing to evaluate: say so rather than report "accuracy 0".
  if (!config_.train.eval_every_epoch)
    no_evaluation_reason_ = "train.eval_every_epoch = false";
  else if (test_reader_->size() == 0)
    no_evaluation_reason_ = "the test split /" + test_reader_->split() + " is empty";
  run_dir_ = run_directory(config_, options_);
  if (!root_) return;
  create_run_directory(run_dir_);
  lock_ = std::make_unique<RunDirLock>(run_dir_);  // before anything is written into it
  // A checkpoint.dir outside the run directory may be another run's too: one owner at a time.
  const CheckpointStore checkpoints(
      (std::filesystem::path(run_dir_) / config_.checkpoint.dir).string(), 0);
  checkpoints.prepare(config_.deck_path);
  checkpoint_lock_ = std::make_unique<RunDirLock>(RunDirLock::checkpoint_dir(
      checkpoints.dir(), std::filesystem::absolute(run_dir_).lexically_normal().string()));
  settle_earlier_run(checkpoints.dir());  // before anything of this run is written
  write_file_checked(run_dir_ + "/deck.toml", to_toml(config_));
  for (const char* file : {"metrics.csv", "summary.json", "log.txt"})
    check_writable_file(run_dir_ + "/" + file);
  log_.open(run_dir_ + "/log.txt");
  if (!earlier_run_.empty())
    log_.line("wavetrain: %s held %s: %s", run_dir_.c_str(), earlier_run_.c_str(),
              options_.overwrite ? "removed it (--overwrite)" : "resuming it");
}

// Rank 0, both directories locked: an earlier run here is resumed, removed (--overwrite) or
// refused; never silently written over.
void Job::settle_earlier_run(const std::string& checkpoint_dir) {
  if (!options_.guard_earlier_run) return;
  earlier_run_ = check_earlier_run(run_dir_, options_.overwrite, resume_request().wanted);
  if (!earlier_run_.empty() && options_.overwrite) clear_earlier_run(run_dir_, checkpoint_dir);
}

Job::~Job() = default;

ResumeRequest resume_request(const RunConfig& config, const JobOptions& options) {
  ResumeRequest r;
  r.from = options.restart_from;
  r.required = options.restart;
  r.wanted = options.restart || !r.from.empty() || config.checkpoint.restart == "auto";
  r.skip_locked = options.skip_locked;
  return r;
}

ResumeRequest Job::resume_request() const { return wt::resume_request(config_, options_); }

void Job::build_model_and_program(Communicator& comm) {
  const ResumeRequest resuming = resume_request();
  std::vector<int> cuts, stage_ranks;
  if (config_.schedule.kind == "burst") {
    BurstStages burst =
        choose_burst_plan(config_, *graph_, run_dir_, resuming, comm, log_, device_);
    cuts = std::move(burst.cuts);
    stage_ranks = std::move(burst.stage_ranks);
  } else {
    cuts = choose_stage_cuts(config_, *graph_,
                             ScheduleRegistry::stage_count(config_.schedule.kind, comm.size()),
                             run_dir_, resuming, comm, log_, device_);
  }
  // Storage deferred: the executor allocates only the stages this rank holds (a waves rank does
  // not hold the whole model, not even while starting); init() follows it.
  model_ = std::make_unique<Model>(std::move(*graph_), device_.allocator(), cuts,
                                   StageStorage::Deferred);
  graph_.reset();
  agree_on_failure(comm, [&] {  // the same on every rank, but agreed all the same: no hang
    try {
      ScheduleInput input =
          make_schedule_input(*model_, config_.schedule, config_.train.global_batch, comm.size());
      input.stage_ranks = stage_ranks;
      program_ = ScheduleRegistry::generate(config_.schedule.kind, input);
      if (options_.colocated_stream >= 0) {
        program_ = on_stream(per_node(program_, input.stages), options_.colocated_stream);
        if (options_.split_backward)
          program_ = split_backward(program_, backward_halves(model_->graph));
        const int stages = static_cast<int>(input.stages.size());
        validate_program(program_, stages, CommRules::Mpi);
        validate_program(program_, stages, CommRules::Nccl);
      }
    } catch (const std::invalid_argument& e) {
      throw InputError(config_.deck_path, 0, "schedule.kind",
                       "'" + config_.schedule.kind + "': " + e.what());
    }
    check_program_batches(config_, program_);
  });
  // Schedules with several waves per rank (ticktock) train one replica per wave.
  for (int r = 1; r < program_.replicas; ++r) {
    more_replicas_.push_back(std::make_unique<Model>(load_training_graph(config_, device_.ops()),
                                                     device_.allocator(), cuts));
    more_replicas_.back()->init(config_.run.seed);
  }
}

void Job::build_executor(Communicator& comm) {
  sampler_ = std::make_unique<BatchSampler>(train_reader_->size(), config_.train.global_batch,
                                            config_.run.seed, config_.data.shuffle);
  source_ = std::make_unique<DatasetBatchSource>(*train_reader_, device_.allocator(), *sampler_,
                                                 config_.train.global_batch, config_.data.preload);
  source_->dequantize_on(device_);  // a GPU's batches travel as their uint8 bytes
  // A step consumes program.global_batches global batches (waves: one per rank).
  per_epoch_ = std::max<int64_t>(1, sampler_->batches_per_epoch() / program_.global_batches);
  optimizer_ = make_optimizer(config_.optimizer, device_);
  std::vector<Model*> replicas;
  for (auto& r : more_replicas_) replicas.push_back(r.get());
  if (config_.data.distribution == "scatter")
    scatter_ = std::make_unique<ScatterBatchSource>(*source_, comm, device_.allocator());
  BatchSource& data = scatter_ ? *scatter_ : static_cast<BatchSource&>(*source_);
  // Test only (exec/planted_bug.hpp): after the validator passed the program.
  const char* planted = std::getenv("WAVETRAIN_TEST_PLANT_BUG");
  const PlantedBug bug = parse_planted_bug(planted ? planted : "");
  plant_in_program(bug, program_);
  if (bug == PlantedBug::CompletedAlways && device_.queues())
    device_.queues()->plant_completed_always(true);
  if (device_.queues()) device_.queues()->plant_glue_bug(glue_bug_of(bug));
  executor_ = std::make_unique<Executor>(device_, *model_, comm, *optimizer_, data, program_,
                                         config_.run.seed, replicas);
  executor_->plant_bug(bug);
  if (bug == PlantedBug::GraphReuseUnordered) device_.allocator().plant_unordered_graph_reuse(true);
  model_->init(config_.run.seed);
  const int stages = int(model_->stages.size());
  guard_ = std::make_unique<NonFiniteGuard>(config_.failure.on_nonfinite, *optimizer_,
                                            device_.allocator(), program_.replicas, stages,
                                            !every_rank_steps_every_stage(program_, stages));
  executor_->set_weight_codec(config_.compress);
  executor_->set_guard(guard_.get());
  if (config_.device.cuda_graphs) {
    // Another job's work issued between this job's instructions would fall into its capture.
    const bool shared =
        options_.id != 0 || options_.colocated_stream >= 0 || !config_.background.deck.empty();
    std::string why_not =
        shared ? "the device is shared with another job (a background or co-located one)"
               : executor_->graphs_refusal();
    if (!shared && executor_->program_communicates()) why_not = agree_on_graphs(comm, why_not);
    if (why_not.empty()) {
      executor_->enable_graphs();
      log_.line(
          "wavetrain: device.cuda_graphs: the second step is captured as a graph, later "
          "steps replay it");
      allow_overlap();
    } else {
      log_.line("wavetrain: device.cuda_graphs: steps run eagerly: %s", why_not.c_str());
    }
  }
  checkpointer_ =
      std::make_unique<Checkpointer>(config_, run_dir_, program_, *model_, *optimizer_, per_epoch_,
                                     sampler_->batches_per_epoch(), comm, log_);
  checkpointer_->set_replicas({replicas, &executor_->kept_gradients()});
}

void Job::start(Communicator& comm) {
  comm_ = &comm;
  agree_on_dataset(comm, dataset_digest_, config_.data.path);     // no rank trains on another copy
  CachingAllocator::JobScope account(device_.allocator(), id());  // its model, state, batches
  build_model_and_program(comm);
  build_executor(comm);
  total_steps_ = config_.train.epochs * per_epoch_;
  if (config_.train.max_steps > 0) total_steps_ = std::min(total_steps_, config_.train.max_steps);
  if (options_.max_steps > 0) total_steps_ = options_.max_steps;
  samples_per_step_ = config_.train.global_batch * program_.global_batches;
  log_.line(
      "wavetrain: model %s (%lld parameters), schedule %s on %d rank%s, %lld steps (%lld per "
      "epoch), global batch %lld",
      model_->graph.name.c_str(), (long long)model_->param_count(), config_.schedule.kind.c_str(),
      comm.size(), comm.size() > 1 ? "s" : "", (long long)total_steps_, (long long)per_epoch_,
      (long long)config_.train.global_batch);
  log_.line("wavetrain: run directory %s", run_dir_.c_str());
  if (fused_relus_ > 0)
    log_.line("wavetrain: %d ReLU(s) fused into the layers around them (model.fuse_epilogues)",
              fused_relus_);
  if (blocked_tensors_ > 0)
    log_.line(
        "wavetrain: %d activation(s) kept in oneDNN's channel-blocked layout between the "
        "convolutions and poolings (model.fuse_epilogues)",
        blocked_tensors_);
  log_.line("wavetrain: data %s: %lld training, %lld test samples, %s", config_.data.path.c_str(),
            (long long)train_reader_->size(), (long long)test_reader_->size(),
            describe_classes(*train_reader_).c_str());
  resume();
  if (config_.train.eval_every_epoch && !no_evaluation_reason_.empty())
    log_.warning("%s: the test split /%s has no samples: training without evaluation",
                 config_.data.path.c_str(), test_reader_->split().c_str());
  if (root_) metrics_ = std::make_unique<MetricsWriter>(run_dir_ + "/metrics.csv", start_step_ > 0);
}

void Job::resume() {
  const ResumeRequest request = resume_request();
  if (request.wanted) {
    start_step_ = std::max<int64_t>(checkpointer_->resume(request), 0);
    if (start_step_ >= total_steps_)
      log_.line("wavetrain: the checkpoint at step %lld already completes the %lld steps",
                (long long)start_step_, (long long)total_steps_);
  }
  if (root_ && start_step_ == 0 && request.wanted && !earlier_run_.empty() && !options_.overwrite)
    log_.line("wavetrain: no checkpoint of the earlier run to resume: it starts over from step 0");
  if (start_step_ == 0 && request.from.empty()) checkpointer_->refuse_other_runs_checkpoints();
  // A resumed run's wall clock and metrics continue where its predecessor stopped.
  if (root_ && start_step_ > 0)
    wall_offset_ = truncate_metrics_after(run_dir_ + "/metrics.csv", start_step_);
}

void Job::allow_overlap() {
  // A step left running is collected after the next one is issued: its non-finite counts would
  // correct the optimizer's step count (skip mode) after the next step used it, and its
  // collectives would be waited for inside the next step's issue.
  std::string why_not;
  if (!config_.device.overlap_steps) why_not = "device.overlap_steps is off";
  if (config_.failure.on_nonfinite == "skip")
    why_not = "failure.on_nonfinite = \"skip\" corrects the next step by this one's counts";
  if (executor_->program_communicates()) why_not = "the program communicates";
  executor_->allow_overlap(why_not.empty());
  if (why_not.empty())
    log_.line(
        "wavetrain: device.overlap_steps: the host issues each replayed step while the last one "
        "runs");
  else if (config_.device.overlap_steps)
    log_.line("wavetrain: device.overlap_steps: each step is read back before the next: %s",
              why_not.c_str());
}

StepStats Job::run_step(int64_t step) {
  launch_step(step);
  return collect_step(step);
}

void Job::launch_step(int64_t step) {
  begin_step(step);
  CachingAllocator::JobScope account(device_.allocator(), id());
  executor_->issue_step();
  executor_->launch_step();
}

StepStats Job::collect_step(int64_t step) {
  {
    CachingAllocator::JobScope account(device_.allocator(), id());
    local_stats_ = executor_->collect_step();
    guard_->vote(step);  // reads the step's counts, as finish_local_step does
  }
  return finish_voted_step(step, -1);
}

void Job::begin_step(int64_t step) {
  lr_ = learning_rate(config_.lr_schedule, config_.optimizer.lr, step, total_steps_);
  CachingAllocator::JobScope account(device_.allocator(), id());
  executor_->begin_step(step, lr_);
}

StepStats Job::finish_step(int64_t step) {
  finish_local_step(step);
  // The step's non-finite counts in one copy: a divergence one rank saw stops every rank here
  // (votes < 0: the guard agrees on them itself).
  return finish_voted_step(step, -1);
}

double Job::finish_local_step(int64_t step) {
  CachingAllocator::JobScope account(device_.allocator(), id());
  local_stats_ = executor_->finish_step();
  return guard_->vote(step);
}

StepStats Job::finish_voted_step(int64_t step, double votes) {
  CachingAllocator::JobScope account(device_.allocator(), id());
  guard_->end_step(step, *comm_, votes);
  StepStats stats = local_stats_;
  if (guard_->skipped(step)) {
    log_.warning("skipped step %lld: %s (%lld skipped so far)", (long long)(step + 1),
                 guard_->last_reason().c_str(), (long long)guard_->skipped_steps());
    stats = StepStats{};  // its loss is not part of the metrics
  }
  return stats;
}

StepStats Job::evaluate() {
  CachingAllocator::JobScope account(device_.allocator(), id());
  source_->quiesce();               // HDF5 is used by one thread at a time
  executor_->prepare_evaluation();  // model-parallel stages: every rank gets current weights
  // eval_batch rows per rank at a time (the deck's memory bound), each rank its part of every
  // batch.
  EvalLoader loader(*test_reader_, device_.allocator(), config_.train.eval_batch * comm_->size(),
                    comm_->rank(), comm_->size());
  const bool skip_nonfinite = config_.failure.on_nonfinite == "skip";
  loader.set_drop_nonfinite(skip_nonfinite);
  StepStats total;
  Tensor x;
  std::vector<int32_t> y;
  while (loader.next(x, y)) {
    if (x.dim(0) == 0) continue;  // the last batch can leave a rank without rows
    StepStats s = executor_->evaluate(x, y);
    total.loss_sum += s.loss_sum;
    total.correct += s.correct;
    total.samples += s.samples;
  }
  executor_->finish_evaluation();  // back to holding only this rank's stages
  double v[5] = {total.loss_sum, total.correct, double(total.samples),
                 double(loader.nonfinite_samples()), double(loader.nonfinite_values())};
  comm_->allreduce_sum(v, 5, 0);
  if (v[3] > 0) {  // the same sums on every rank: all report, or all stop, alike
    const std::string what = config_.data.path + ": the test split /" + test_reader_->split() +
                             " has " + std::to_string(int64_t(v[3])) +
                             " sample(s) with NaN or Inf inputs (" + std::to_string(int64_t(v[4])) +
                             " values)";
    if (!skip_nonfinite)
      throw Diverged(what + "; failure.on_nonfinite = \"skip\" leaves them out of the evaluation");
    log_.warning("%s: left out of the test loss and accuracy", what.c_str());
  }
  return StepStats{v[0], v[1], int64_t(v[2])};
}

void Job::stop_after(int64_t steps_done) {
  stopped_early_ = true;
  total_steps_ = steps_done;
}

}  // namespace wt

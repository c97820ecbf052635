#include "app/trainer.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "app/checkpointer.hpp"
#include "app/run_control.hpp"
#include "app/run_log.hpp"
#include "app/stage_choice.hpp"
#include "app/text_format.hpp"
#include "data/batch_sampler.hpp"
#include "data/dataset_batch_source.hpp"
#include "data/dataset_reader.hpp"
#include "deck/deck_parser.hpp"
#include "deck/input_error.hpp"
#include "exec/executor.hpp"
#include "exec/nonfinite_guard.hpp"
#include "exec/schedule_input.hpp"
#include "io/metrics_writer.hpp"
#include "io/trace_recorder.hpp"
#include "model/model.hpp"
#include "ops/host/lr_schedule.hpp"
#include "ops/host/optimizers.hpp"
#include "sched/schedule_registry.hpp"

namespace wt {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double peak_rss_mb() {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss / 1024.0;  // Linux: kilobytes
}

std::string format_duration(double s) {
  char buf[32];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%dh%02dm", int(s / 3600), int(std::fmod(s, 3600) / 60));
  else
    std::snprintf(buf, sizeof buf, "%dm%02ds", int(s / 60), int(std::fmod(s, 60)));
  return buf;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

// Evaluates the whole split, each rank its contiguous share, in eval_batch chunks.
StepStats evaluate_split(Executor& exec, DatasetReader& reader, int64_t eval_batch,
                         Communicator& comm) {
  const int64_t n = reader.size();
  const int64_t begin = n * comm.rank() / comm.size();
  const int64_t end = n * (comm.rank() + 1) / comm.size();
  StepStats total;
  for (int64_t b = begin; b < end; b += eval_batch) {
    const int64_t count = std::min(eval_batch, end - b);
    std::vector<int64_t> rows(count);
    for (int64_t i = 0; i < count; ++i) rows[i] = b + i;
    Shape shape{count};
    for (int64_t d : reader.sample_shape()) shape.push_back(d);
    Tensor x = Tensor::empty(shape, 1);
    std::vector<int32_t> y(size_t(count * reader.labels_per_sample()));
    reader.read(rows, x.data(), y.data());
    StepStats s = exec.evaluate(x, y);
    total.loss_sum += s.loss_sum;
    total.correct += s.correct;
    total.samples += s.samples;
  }
  double v[3] = {total.loss_sum, total.correct, double(total.samples)};
  comm.allreduce_sum(v, 3, 0);
  return StepStats{v[0], v[1], int64_t(v[2])};
}

}  // namespace

std::string run_directory(const RunConfig& config, const TrainOptions& options) {
  if (!options.run_dir.empty()) return options.run_dir;
  return (std::filesystem::path(config.run.output_dir) / config.run.name).string();
}

TrainResult train(const RunConfig& cfg, const TrainOptions& options, Communicator& comm) {
  const auto t_start = std::chrono::steady_clock::now();
  const bool root = comm.rank() == 0;
  RunLog log(root, options.quiet);

  // Everything that can reject the input happens before the run directory is touched.
  if (cfg.device.kind == "cuda")
    throw InputError(
        cfg.deck_path, 0, "device.kind",
        "'cuda': the CUDA operators are built but the executor runs layers on the host "
        "in this version; use \"cpu\" or \"auto\"");
  // On a CPU rank the device-memory budget is enforced by the caching allocator.
  device_allocator().set_limit(static_cast<size_t>(cfg.device.memory_limit));
  Graph graph = Graph::load(cfg.model.file);
  DatasetReader train_reader(cfg.data.path, cfg.data.train_split, graph.input_shape, graph.classes);
  DatasetReader test_reader(cfg.data.path, cfg.data.test_split, graph.input_shape, graph.classes);
  // A per-token loss reads T labels per sample; the file must hold exactly that many.
  const int64_t labels_per_sample = graph.nodes.back().layer->labels_per_sample();
  for (const DatasetReader* r : {&train_reader, &test_reader})
    if (r->labels_per_sample() != labels_per_sample)
      throw InputError(cfg.data.path, 0, "/" + r->split() + "/labels",
                       "has " + std::to_string(r->labels_per_sample()) +
                           " label(s) per sample, but the model's loss layer '" +
                           graph.nodes.back().name + "' needs " +
                           std::to_string(labels_per_sample));

  const std::string run_dir = run_directory(cfg, options);
  if (root) {
    std::filesystem::create_directories(run_dir);
    std::ofstream(run_dir + "/deck.toml") << to_toml(cfg);
  }
  comm.barrier();
  log.open(run_dir + "/log.txt");

  const std::vector<int> cuts =
      choose_stage_cuts(cfg, graph, ScheduleRegistry::stage_count(cfg.schedule.kind, comm.size()),
                        run_dir, options.restart || cfg.checkpoint.restart == "auto", comm, log);
  // Storage deferred: the executor allocates only the stages this rank holds (a waves rank does
  // not hold the whole model, not even while starting); init() follows it.
  Model model(std::move(graph), cuts, StageStorage::Deferred);

  BatchSampler sampler(train_reader.size(), cfg.train.global_batch, cfg.run.seed, cfg.data.shuffle);
  DatasetBatchSource source(train_reader, sampler, cfg.train.global_batch, cfg.data.preload);

  Program program;
  try {
    program =
        ScheduleRegistry::generate(cfg.schedule.kind, make_schedule_input(model, cfg, comm.size()));
  } catch (const std::invalid_argument& e) {
    throw InputError(cfg.deck_path, 0, "schedule.kind", "'" + cfg.schedule.kind + "': " + e.what());
  }
  // A step consumes program.global_batches global batches (waves: one per rank).
  const int64_t per_epoch =
      std::max<int64_t>(1, sampler.batches_per_epoch() / program.global_batches);
  std::unique_ptr<Optimizer> optimizer = make_optimizer(cfg.optimizer);
  // Schedules with several waves per rank (ticktock) train one replica per wave.
  std::vector<std::unique_ptr<Model>> more_replicas;
  std::vector<Model*> replica_ptrs;
  for (int r = 1; r < program.replicas; ++r) {
    more_replicas.push_back(std::make_unique<Model>(Graph::load(cfg.model.file), cuts));
    more_replicas.back()->init(cfg.run.seed);
    replica_ptrs.push_back(more_replicas.back().get());
  }
  Executor exec(model, comm, *optimizer, source, program, cfg.run.seed, replica_ptrs);
  model.init(cfg.run.seed);
  NonFiniteGuard guard(cfg.failure.on_nonfinite);
  exec.set_step_guard([&guard](int64_t step, int stage, const Tensor& grads) {
    return guard.allow_step(step, stage, grads);
  });

  int64_t total_steps = cfg.train.epochs * per_epoch;
  if (cfg.train.max_steps > 0) total_steps = std::min(total_steps, cfg.train.max_steps);
  if (options.max_steps > 0) total_steps = options.max_steps;
  const int64_t samples_per_step = cfg.train.global_batch * program.global_batches;

  log.line(
      "wavetrain: model %s (%lld parameters), schedule %s on %d rank%s, %lld steps (%lld per "
      "epoch), global batch %lld",
      model.graph.name.c_str(), (long long)model.param_count(), cfg.schedule.kind.c_str(),
      comm.size(), comm.size() > 1 ? "s" : "", (long long)total_steps, (long long)per_epoch,
      (long long)cfg.train.global_batch);
  log.line("wavetrain: run directory %s", run_dir.c_str());

  Checkpointer checkpointer(cfg, run_dir, program, model, *optimizer, per_epoch, comm, log);
  checkpointer.set_replicas({replica_ptrs, &exec.kept_gradients()});
  int64_t start_step = 0;
  if (options.restart || cfg.checkpoint.restart == "auto") {
    start_step = std::max<int64_t>(checkpointer.resume(options.restart), 0);
    if (start_step >= total_steps)
      log.line("wavetrain: the checkpoint at step %lld already completes the %lld steps",
               (long long)start_step, (long long)total_steps);
  }
  double wall_offset = 0;  // a resumed run's wall clock continues where its predecessor stopped
  if (root && start_step > 0)
    wall_offset = truncate_metrics_after(run_dir + "/metrics.csv", start_step);
  RunControl control(cfg, options.walltime_s, comm, t_start);
  int64_t last_checkpoint = start_step > 0 ? start_step : -1;
  std::unique_ptr<TraceRecorder> trace;  // steps [trace.start_step, trace.end_step) -> trace.h5
  if (cfg.trace.enabled)
    trace =
        std::make_unique<TraceRecorder>(comm, exec, device_allocator(),
                                        TraceInfo{comm.size(), cfg.schedule.kind, model.graph.name,
                                                  cfg.trace.start_step, cfg.trace.end_step},
                                        run_dir + "/trace.h5");

  std::unique_ptr<MetricsWriter> metrics;
  if (root) metrics = std::make_unique<MetricsWriter>(run_dir + "/metrics.csv", start_step > 0);

  TrainResult result;
  result.start_step = start_step;
  std::vector<double> step_times;
  step_times.reserve(total_steps);
  StepStats window;           // since the last metrics row (all ranks)
  StepStats progress_window;  // since the last progress line (rank 0's own shard)
  auto t_progress = std::chrono::steady_clock::now();
  auto t_window = t_progress;
  int64_t window_steps = 0, progress_steps = 0;

  for (int64_t step = start_step; step < total_steps; ++step) {
    const double lr = learning_rate(cfg, step, total_steps);
    if (options.on_step) options.on_step(step);
    const auto t0 = std::chrono::steady_clock::now();
    if (trace) trace->begin_step(step);
    StepStats s = exec.run_step(step, lr);
    if (trace) trace->end_step(step);
    const double step_seconds = seconds_since(t0);
    step_times.push_back(step_seconds);
    if (guard.skipped(step)) {
      log.line("wavetrain: skipped step %lld: %s (%lld skipped so far)", (long long)(step + 1),
               guard.last_reason().c_str(), (long long)guard.skipped_steps());
      s = StepStats{};  // its loss is not part of the metrics
    }
    for (StepStats* w : {&window, &progress_window}) {
      w->loss_sum += s.loss_sum;
      w->correct += s.correct;
      w->samples += s.samples;
    }
    ++window_steps;
    ++progress_steps;
    const double epoch_pos = double(step + 1) / per_epoch;

    if (root && seconds_since(t_progress) >= cfg.run.progress_seconds) {
      const double dt = seconds_since(t_progress);
      const double rate = progress_steps * samples_per_step / dt;
      const double eta = (total_steps - step - 1) * samples_per_step / std::max(rate, 1e-9);
      log.line("epoch %lld/%lld step %lld/%lld loss %.4f lr %.4g %.0f samples/s ETA %s",
               (long long)(step / per_epoch + 1),
               (long long)((total_steps + per_epoch - 1) / per_epoch), (long long)(step + 1),
               (long long)total_steps,
               progress_window.samples ? progress_window.loss_sum / progress_window.samples : 0.0,
               lr, rate, format_duration(eta).c_str());
      progress_window = StepStats{};
      progress_steps = 0;
      t_progress = std::chrono::steady_clock::now();
    }

    const bool epoch_end = (step + 1) % per_epoch == 0 || step + 1 == total_steps;
    if ((step + 1) % cfg.train.log_every_steps == 0 || epoch_end) {
      double v[3] = {window.loss_sum, window.correct, double(window.samples)};
      comm.allreduce_sum(v, 3, 0);
      // A non-finite loss whose gradient stayed finite; the sum is the same on every rank.
      if (!std::isfinite(v[0]) && cfg.failure.on_nonfinite == "stop")
        throw Diverged("non-finite loss/gradient at step " + std::to_string(step + 1) +
                       " (training loss summed over the last " + std::to_string(window_steps) +
                       " steps is not finite)");
      if (metrics) {
        MetricsRow row;
        row.kind = "train";
        row.step = step + 1;
        row.epoch = epoch_pos;
        row.loss = v[2] > 0 ? v[0] / v[2] : 0;
        row.accuracy = v[2] > 0 ? v[1] / v[2] : 0;
        row.lr = lr;
        row.samples_per_s = window_steps * samples_per_step / seconds_since(t_window);
        row.wall_s = wall_offset + seconds_since(t_start);
        row.peak_device_mb = device_allocator().stats().peak_reserved / 1048576.0;
        row.rss_mb = peak_rss_mb();
        metrics->write(row);
      }
      window = StepStats{};
      window_steps = 0;
      t_window = std::chrono::steady_clock::now();
    }

    if (epoch_end && cfg.train.eval_every_epoch) {
      source.quiesce();           // HDF5 is used by one thread at a time
      exec.prepare_evaluation();  // model-parallel stages: every rank gets current weights
      StepStats e = evaluate_split(exec, test_reader, cfg.train.eval_batch, comm);
      exec.finish_evaluation();  // back to holding only this rank's stages
      result.test_accuracy = e.samples ? e.correct / e.samples : 0;
      result.test_loss = e.samples ? e.loss_sum / e.samples : 0;
      // Per-token losses are means over tokens in nats; bits per token (per character for a
      // character model) is the figure language models are compared by.
      char bits[48] = "";
      if (labels_per_sample > 1)
        std::snprintf(bits, sizeof bits, " = %.4f bits per token",
                      result.test_loss / std::log(2.0));
      log.line("epoch %lld done: test accuracy %.4f, test loss %.4f%s (%lld samples), %s elapsed",
               (long long)((step + 1 + per_epoch - 1) / per_epoch), result.test_accuracy,
               result.test_loss, bits, (long long)e.samples,
               format_duration(seconds_since(t_start)).c_str());
      if (metrics) {
        MetricsRow row;
        row.kind = "eval";
        row.step = step + 1;
        row.epoch = epoch_pos;
        row.loss = result.test_loss;
        row.accuracy = result.test_accuracy;
        row.lr = lr;
        row.wall_s = wall_offset + seconds_since(t_start);
        row.peak_device_mb = device_allocator().stats().peak_reserved / 1048576.0;
        row.rss_mb = peak_rss_mb();
        metrics->write(row);
      }
      t_window = std::chrono::steady_clock::now();
    }

    const RunAction action = control.after_step(step + 1, step_seconds);
    if (action.checkpoint) {
      source.quiesce();
      control.checkpoint_written(checkpointer.save(step + 1));
      last_checkpoint = step + 1;
    }
    if (action.stop) {
      if (action.walltime)
        log.line("wavetrain: stopping at step %lld: the wall time runs out; resubmit to resume",
                 (long long)(step + 1));
      else
        log.line("wavetrain: stopping at step %lld on signal %d; resubmit to resume",
                 (long long)(step + 1), action.signal);
      result.stopped_early = true;
      total_steps = step + 1;
      break;
    }
  }
  source.quiesce();
  if (trace) trace->finish();
  if (!result.stopped_early && last_checkpoint != total_steps && total_steps > start_step)
    checkpointer.save(total_steps);  // the end of the run is always checkpointed

  result.steps = total_steps;
  result.skipped_steps = guard.skipped_steps();
  result.wall_s = seconds_since(t_start);
  // The first steps warm caches and the allocator; the median of the rest is the steady rate.
  std::vector<double> steady(step_times.begin() + std::min<size_t>(step_times.size() / 10, 10),
                             step_times.end());
  const double med = median(steady);
  result.samples_per_s_median = med > 0 ? samples_per_step / med : 0;
  std::vector<double> rss(comm.size(), 0.0);
  rss[comm.rank()] = peak_rss_mb();
  comm.allreduce_sum(rss.data(), comm.size(), 0);
  if (result.stopped_early) {
    log.line(
        "wavetrain: stopped at step %lld after %s with a checkpoint; exit status 75 asks for a "
        "resubmission",
        (long long)total_steps, format_duration(result.wall_s).c_str());
    return result;
  }
  if (root) {
    std::ofstream summary(run_dir + "/summary.json");
    summary << "{\n  \"model\": \"" << model.graph.name << "\",\n  \"schedule\": \""
            << cfg.schedule.kind << "\",\n  \"ranks\": " << comm.size()
            << ",\n  \"steps\": " << total_steps << ",\n  \"resumed_from_step\": " << start_step
            << ",\n  \"skipped_steps\": " << result.skipped_steps
            << ",\n  \"global_batch\": " << cfg.train.global_batch
            << ",\n  \"samples_per_s_median\": " << result.samples_per_s_median
            << ",\n  \"wall_s\": " << result.wall_s
            << ",\n  \"test_accuracy\": " << result.test_accuracy
            << ",\n  \"peak_rss_mb\": " << *std::max_element(rss.begin(), rss.end())
            << ",\n  \"peak_device_mb\": " << device_allocator().stats().peak_reserved / 1048576.0
            << "\n}\n";
  }
  // test_accuracy stays negative when no evaluation ran (train.eval_every_epoch = false).
  const std::string final_eval =
      result.test_accuracy < 0
          ? std::string("no test evaluation (train.eval_every_epoch = false)")
          : "final test accuracy " + format_number("%.4f", result.test_accuracy);
  log.line("wavetrain: done: %lld steps in %s, median %.0f samples/s, %s", (long long)total_steps,
           format_duration(result.wall_s).c_str(), result.samples_per_s_median, final_eval.c_str());
  return result;
}

}  // namespace wt

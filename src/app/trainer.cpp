#include "app/trainer.hpp"

#include <filesystem>
#include <memory>
#include <vector>

#include "app/job_failure.hpp"
#include "app/observers/checkpoint_observer.hpp"
#include "app/observers/evaluation_observer.hpp"
#include "app/observers/metrics_observer.hpp"
#include "app/observers/progress_observer.hpp"
#include "app/observers/summary_observer.hpp"
#include "app/observers/trace_observer.hpp"
#include "app/training_loop.hpp"
#include "comm/failure_agreement.hpp"
#include "deck/component_options.hpp"
#include "device/device_context.hpp"
#include "job/job.hpp"

namespace wt {

namespace {

JobOptions job_options(const TrainOptions& options) {
  JobOptions job;
  job.run_dir = options.run_dir;
  job.max_steps = options.max_steps;
  job.quiet = options.quiet;
  job.restart = options.restart;
  job.restart_from = options.restart_from;
  job.skip_locked = options.skip_locked;
  return job;
}

// The caller's hook before every step (the stall detector's step number).
class StepCallback : public StepObserver {
 public:
  explicit StepCallback(std::function<void(int64_t)> on_step) : on_step_(std::move(on_step)) {}
  void before_step(Job&, int64_t step) override {
    if (on_step_) on_step_(step);
  }
  void after_step(Job&, const StepRecord&) override {}

 private:
  std::function<void(int64_t)> on_step_;
};

}  // namespace

std::string run_directory(const RunConfig& config, const TrainOptions& options) {
  return run_directory(config, job_options(options));
}

TrainResult train(const RunConfig& cfg, const TrainOptions& options, Communicator& comm) {
  const auto t_start = std::chrono::steady_clock::now();
  // The rank's device, shared by its jobs; declared first, so it outlives their tensors.
  DeviceContext device(static_cast<size_t>(cfg.device.memory_limit),
                       cfg.device.kind == "strict" ? DeviceKind::Strict : DeviceKind::Host,
                       static_cast<uint64_t>(cfg.device.strict_seed + comm.rank()));
  configure_allocator(cfg, device.allocator());
  std::unique_ptr<Job> job;
  agree_on_failure(comm, [&] {
    job = std::make_unique<Job>(cfg, job_options(options), device, comm.rank(), comm.size());
  });
  report_job_failures_to(job->run_dir() + "/log.txt");  // whichever rank fails logs it
  report_job_failure_resume_point(
      (std::filesystem::path(job->run_dir()) / cfg.checkpoint.dir).string());
  job->start(comm);

  // In this order after each step and at the end: the trace closes the step first; the end
  // checkpoint comes before the summary and the final line.
  StepCallback callback(options.on_step);
  std::unique_ptr<TraceObserver> trace;
  if (cfg.trace.enabled) trace = std::make_unique<TraceObserver>(*job);
  ProgressObserver progress;
  MetricsObserver metrics(t_start, cfg.failure);
  EvaluationObserver evaluation(t_start, metrics);
  CheckpointObserver checkpoints(*job, options.walltime_s, t_start);
  SummaryObserver summary(*job, t_start, evaluation);
  std::vector<StepObserver*> observers{&callback};
  if (trace) observers.push_back(trace.get());
  for (StepObserver* o : std::initializer_list<StepObserver*>{&progress, &metrics, &evaluation,
                                                              &checkpoints, &summary})
    observers.push_back(o);

  TrainingLoop loop;
  loop.add_job(*job, observers);
  loop.run();
  return summary.result();
}

}  // namespace wt

#include "app/trainer.hpp"

#include <filesystem>
#include <memory>
#include <vector>

#include "app/auto/auto_schedule.hpp"
#include "app/background/background_training.hpp"
#include "app/colocated_training.hpp"
#include "app/job_failure.hpp"
#include "app/job_observers.hpp"
#include "app/training_loop.hpp"
#include "comm/failure_agreement.hpp"
#include "deck/component_options.hpp"
#include "device/device_context.hpp"
#include "job/device_options.hpp"
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
  job.overwrite = options.overwrite;
  return job;
}

}  // namespace

std::string run_directory(const RunConfig& config, const TrainOptions& options) {
  return run_directory(config, job_options(options));
}

TrainResult train(const RunConfig& deck, const TrainOptions& options, Communicator& comm) {
  if (!deck.colocate.decks.empty()) return train_colocated(deck, options, comm);
  const auto t_start = std::chrono::steady_clock::now();
  // The rank's device, shared by its jobs; declared first, so it outlives their tensors.
  DeviceContext device(device_options(deck, comm.rank(), options.gpu));
  configure_allocator(deck, device.allocator());
  // schedule.kind = "auto": the simulator's choice, from here on as if the deck had named it.
  const RunConfig cfg = deck.schedule.kind == "auto"
                            ? resolve_auto_schedule(deck, job_options(options), comm, device)
                            : deck;
  std::unique_ptr<Job> job;
  agree_on_failure(comm, [&] {
    job = std::make_unique<Job>(cfg, job_options(options), device, comm.rank(), comm.size());
  });
  report_job_failures_to(job->run_dir() + "/log.txt");  // whichever rank fails logs it
  report_job_failure_resume_point(
      (std::filesystem::path(job->run_dir()) / cfg.checkpoint.dir).string());
  job->start(comm);

  // DeepPool multiplexing: a local background job in the foreground's idle time.
  std::unique_ptr<BackgroundTraining> background;
  if (!cfg.background.deck.empty())
    background = std::make_unique<BackgroundTraining>(cfg, options, *job, comm, t_start);

  JobObservers observers(*job, cfg, options, t_start);
  TrainingLoop loop;
  loop.add_job(*job, observers.list());
  if (background) loop.set_step_driver(background->driver());
  loop.run();
  if (background) background->finish();
  return observers.result();
}

}  // namespace wt

#include "app/colocated_training.hpp"

#include <memory>
#include <vector>

#include "app/colocation_decks.hpp"
#include "app/colocation_fit.hpp"
#include "app/job_failure.hpp"
#include "app/job_observers.hpp"
#include "app/paired_rounds.hpp"
#include "app/run_control.hpp"
#include "app/training_loop.hpp"
#include "comm/failure_agreement.hpp"
#include "deck/component_options.hpp"
#include "device/device_context.hpp"
#include "job/device_options.hpp"
#include "job/job.hpp"

namespace wt {

namespace {

TrainResult combined(std::vector<std::unique_ptr<JobObservers>>& observers) {
  TrainResult all = observers.front()->result();
  for (auto& o : observers) {
    const TrainResult r = o->result();
    all.stopped_early = all.stopped_early || r.stopped_early;
    all.steps = std::max(all.steps, r.steps);
    all.skipped_steps += r.skipped_steps;
  }
  return all;
}

}  // namespace

TrainResult train_colocated(const RunConfig& cfg, const TrainOptions& options, Communicator& comm) {
  const auto t_start = std::chrono::steady_clock::now();
  ColocatedJobDecks resolved;
  agree_on_failure(
      comm, [&] { resolved = colocated_job_decks(cfg, run_directory(cfg, options), comm.size()); });
  const std::vector<RunConfig>& decks = resolved.decks;
  const std::vector<std::string>& job_dirs = resolved.run_dirs;
  // One device under this deck's budget; Waterwave's allocator: another stream's frees wait for
  // a pair boundary's synchronisation.
  DeviceContext device(device_options(cfg, comm.rank(), options.gpu));
  configure_allocator(cfg, device.allocator());
  device.allocator().set_cross_stream_reuse(CrossStreamReuse::AfterSync);
  std::vector<std::unique_ptr<Job>> jobs;
  for (size_t k = 0; k < decks.size(); ++k) {
    JobOptions o;
    o.run_dir = job_dirs[k];
    o.max_steps = options.max_steps;
    o.quiet = options.quiet;
    o.restart = options.restart;
    o.skip_locked = options.skip_locked;
    o.overwrite = options.overwrite;
    o.id = static_cast<int>(k);
    o.colocated_stream = static_cast<int>(k % 2);  // Waterwave's two streams
    o.log_prefix = "[" + decks[k].run.name + "] ";
    agree_on_failure(comm, [&] {
      jobs.push_back(std::make_unique<Job>(decks[k], o, device, comm.rank(), comm.size()));
    });
  }
  report_job_failures_to(jobs.front()->run_dir() + "/log.txt");  // whichever rank fails logs it
  for (auto& job : jobs) {
    const FailingJobScope failing(*job);  // its out-of-memory, say, names it
    job->start(comm);
  }
  std::vector<Job*> started;
  for (auto& job : jobs) started.push_back(job.get());
  agree_on_failure(comm, [&] {  // a node no pairing can run: exit 3 before any step
    check_nodes_fit_beside(decks, started, cfg.device.memory_limit, comm.size());
  });
  RoundOptions round;
  round.memory_limit = cfg.device.memory_limit;
  round.partition = partition_named(cfg.colocate.partition);
  round.pairing = pairing_named(cfg.colocate.pairing);
  PairedRounds pairs(round, cfg.colocate.split_bytes, cfg.colocate.pair_order == "alloc_first");
  TrainingLoop loop;
  if (cfg.colocate.sharing == "nodegroups") loop.set_paired_rounds(&pairs);
  loop.set_interleaved(cfg.colocate.sharing == "unordered");
  // One stop decision per pass for every job (a signal, the walltime): they all stop after the
  // same round. The first job's checkpoint.every_seconds and walltime margin.
  RunControl stops(decks.front(), options.walltime_s, comm, t_start);
  std::vector<std::unique_ptr<JobObservers>> observers;
  for (size_t k = 0; k < jobs.size(); ++k) {
    observers.push_back(
        std::make_unique<JobObservers>(*jobs[k], decks[k], options, t_start, &stops));
    loop.add_job(*jobs[k], observers.back()->list());
  }
  loop.run();
  return combined(observers);
}

}  // namespace wt

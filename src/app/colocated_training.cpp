#include "app/colocated_training.hpp"

#include <filesystem>
#include <map>
#include <memory>
#include <vector>

#include "app/colocation_fit.hpp"
#include "app/job_failure.hpp"
#include "app/job_observers.hpp"
#include "app/paired_rounds.hpp"
#include "app/training_loop.hpp"
#include "comm/failure_agreement.hpp"
#include "deck/component_options.hpp"
#include "deck/deck_parser.hpp"
#include "device/device_context.hpp"
#include "job/device_options.hpp"
#include "job/job.hpp"

namespace fs = std::filesystem;

namespace wt {

namespace {

// The jobs' decks, each validated like any deck (an error names its own file, line and key), and
// each job's run directory under this deck's; two jobs may not share one.
std::vector<RunConfig> job_decks(const RunConfig& cfg, const std::string& run_dir,
                                 std::vector<std::string>& job_dirs) {
  const fs::path base = fs::path(cfg.deck_path).parent_path();
  std::vector<RunConfig> decks;
  std::map<std::string, std::string> deck_of_dir;
  for (const std::string& path : cfg.colocate.decks) {
    decks.push_back(parse_deck((base / path).string()));
    if (decks.back().schedule.kind == "auto")  // auto plans a job alone on its ranks
      throw deck_error(decks.back(), "schedule.kind",
                       "\"auto\" chooses a schedule for a job that has its ranks to itself, not "
                       "for one co-located with others: name the schedule (--show-auto prints "
                       "auto's choice)");
    const std::string dir = (fs::path(run_dir) / decks.back().run.name).string();
    auto [it, fresh] = deck_of_dir.emplace(dir, path);
    if (!fresh)
      throw deck_error(cfg, "colocate.decks",
                       "'" + it->second + "' and '" + path + "' both name run.name = \"" +
                           decks.back().run.name + "\": each job needs its own run directory");
    job_dirs.push_back(dir);
  }
  if (cfg.device.memory_limit > 0 && cfg.colocate.split_bytes > cfg.device.memory_limit)
    throw deck_error(cfg, "colocate.split_bytes",
                     std::to_string(cfg.colocate.split_bytes) +
                         " bytes is more than the device's budget, device.memory_limit = " +
                         std::to_string(cfg.device.memory_limit));
  return decks;
}

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
  std::vector<RunConfig> decks;
  std::vector<std::string> job_dirs;
  agree_on_failure(comm, [&] { decks = job_decks(cfg, run_directory(cfg, options), job_dirs); });
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
    o.id = static_cast<int>(k);
    o.colocated_stream = static_cast<int>(k % 2);  // Waterwave's two streams
    o.log_prefix = "[" + decks[k].run.name + "] ";
    agree_on_failure(comm, [&] {
      jobs.push_back(std::make_unique<Job>(decks[k], o, device, comm.rank(), comm.size()));
    });
  }
  report_job_failures_to(jobs.front()->run_dir() + "/log.txt");  // whichever rank fails logs it
  for (auto& job : jobs) job->start(comm);
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
  std::vector<std::unique_ptr<JobObservers>> observers;
  for (size_t k = 0; k < jobs.size(); ++k) {
    observers.push_back(std::make_unique<JobObservers>(*jobs[k], decks[k], options, t_start));
    loop.add_job(*jobs[k], observers.back()->list());
  }
  loop.run();
  return combined(observers);
}

}  // namespace wt

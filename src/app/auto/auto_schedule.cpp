#include "app/auto/auto_schedule.hpp"

#include <algorithm>
#include <filesystem>
#include <memory>
#include <set>
#include <sstream>

#include "app/auto/auto_candidates.hpp"
#include "app/auto/auto_measure.hpp"
#include "app/auto/auto_ranking.hpp"
#include "app/text_format.hpp"
#include "comm/failure_agreement.hpp"
#include "comm/link_probe.hpp"
#include "deck/component_options.hpp"
#include "io/run_log.hpp"
#include "job/earlier_run.hpp"
#include "job/run_dir_lock.hpp"
#include "job/run_preflight.hpp"
#include "job/stage_choice.hpp"
#include "mem/caching_allocator.hpp"
#include "plan/layer_profile_file.hpp"
#include "plan/stage_planner.hpp"
#include "pricing/burst_costs.hpp"
#include "util/input_error.hpp"

namespace wt {

namespace {

// Every per-rank batch a candidate runs a layer at: the profile must hold each (a GPU's time is
// far from a line at small batches).
std::vector<int64_t> candidate_batches(const RunConfig& deck, int ranks) {
  const int64_t batch = deck.train.global_batch;
  std::set<int64_t> sizes = {batch};
  for (int64_t m : {1, 2, 4, 8})
    if (batch % m == 0) sizes.insert(batch / m);
  for (int g : burst_counts(ranks, batch)) sizes.insert(batch / g);
  sizes.insert(std::max<int64_t>(1, batch / ranks));
  return {sizes.begin(), sizes.end()};
}

// Each candidate's reason, when none can run on these ranks at all.
void require_a_runnable_candidate(const AutoRanking& ranking, const std::string& file,
                                  const std::string& key) {
  std::string reasons;
  for (const RankedCandidate& r : ranking.rows) {
    if (r.impossible.empty()) return;
    reasons += "\n  " + r.name + ": " + r.impossible;
  }
  throw InputError(
      file, 0, key,
      "no schedule can run this model on " + std::to_string(ranking.ranks) + " ranks:" + reasons);
}

[[noreturn]] void throw_nothing_fits(const AutoRanking& ranking) {
  const RankedCandidate* least = nullptr;
  for (const RankedCandidate& r : ranking.rows)
    if (r.impossible.empty() && (!least || r.peak_bytes < least->peak_bytes)) least = &r;
  throw OutOfMemory("schedule.kind = \"auto\": no candidate fits the memory limit of " +
                    human_bytes(double(ranking.memory_limit)) + " per rank; the least need is " +
                    least->name + "'s " + human_bytes(double(least->peak_bytes)) + " x " +
                    format_number("%g", ranking.memory_margin) +
                    " (auto.memory_margin; the ranking lists each candidate's need)");
}

int pick_or_throw(const AutoRanking& ranking, const RunConfig& deck, const std::string& file) {
  require_a_runnable_candidate(ranking, file, file.empty() ? "--ranks" : "schedule.kind");
  const int pick = auto_pick(ranking, deck.automatic.lossy);
  if (pick < 0) throw_nothing_fits(ranking);
  return pick;
}

std::string ranking_text(const AutoRanking& ranking, int pick) {
  std::ostringstream out;
  print_auto_ranking(out, ranking, pick);
  return out.str();
}

void log_lines(RunLog& log, const std::string& text) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) log.line("%s", line.c_str());
}

// The profile at every candidate batch the memory limit lets the whole model run at (profiling
// holds every layer's activations at once, more than a model-parallel candidate does): the
// layer times of larger batches are then the fitted line's.
ObtainedProfile profile_within_budget(const RunConfig& deck, const Graph& graph, int ranks,
                                      const std::string& run_dir, RunLog& log,
                                      DeviceContext& device) {
  StagePlanOptions options = stage_plan_options(deck);
  std::vector<int64_t> batches = candidate_batches(deck, ranks);
  for (;;) {
    options.stage_batch = batches.back();
    options.profile_batches = batches;
    try {
      return obtain_layer_profile(options, graph, run_dir, ProfileCache::ReadWrite, device);
    } catch (const OutOfMemory&) {
      if (batches.size() == 1) throw;
      log.warning(
          "auto: the model does not fit device.memory_limit for profiling at %lld "
          "samples: its layer times there are extrapolated from smaller batches",
          (long long)batches.back());
      batches.pop_back();
    }
  }
}

// Rank 0: the ranking on this machine's measured layer times and link.
AutoRanking rank_on_this_machine(const RunConfig& deck, const std::vector<AutoCandidate>& list,
                                 const LinkCost& link, int ranks, const std::string& run_dir,
                                 RunLog& log, DeviceContext& device) {
  const Graph graph = Graph::load(deck.model.file);
  const ObtainedProfile obtained = profile_within_budget(deck, graph, ranks, run_dir, log, device);
  for (const std::string& w : obtained.warnings) log.warning("%s", w.c_str());
  const DeviceModel machine =
      measured_machine(link.alpha_s, link.bytes_per_s, ranks, deck.device.memory_limit);
  return rank_auto_candidates(list, graph, machine, &obtained.profile, ranks,
                              deck.device.memory_limit, deck.automatic.memory_margin);
}

AutoRanking rank_on_model(const RunConfig& deck, const AutoModelRequest& request) {
  const DeviceModel device = load_device_model(request.device);
  const Graph graph = Graph::load(deck.model.file);
  LayerProfile profile;
  if (!request.profile.empty()) profile = load_checked_profile(request.profile, graph);
  int64_t limit = device.memory_bytes;
  if (deck.device.memory_limit > 0)
    limit = limit > 0 ? std::min(limit, deck.device.memory_limit) : deck.device.memory_limit;
  return rank_auto_candidates(auto_candidates(deck, request.ranks), graph, device,
                              request.profile.empty() ? nullptr : &profile, request.ranks, limit,
                              deck.automatic.memory_margin);
}

}  // namespace

void show_auto(const RunConfig& deck, const AutoModelRequest& request, std::ostream& out) {
  const AutoRanking ranking = rank_on_model(deck, request);
  require_a_runnable_candidate(ranking, "", "--ranks");
  const int pick = auto_pick(ranking, deck.automatic.lossy);
  print_auto_ranking(out, ranking, pick);
  if (pick >= 0) out << "auto: " << auto_reason(ranking, pick) << "\n";
}

RunConfig auto_choice_on_model(const RunConfig& deck, const AutoModelRequest& request,
                               std::ostream& out) {
  const AutoRanking ranking = rank_on_model(deck, request);
  const int pick = pick_or_throw(ranking, deck, "");
  out << "auto: " << auto_reason(ranking, pick) << "\n";
  return auto_candidates(deck, request.ranks)[ranking.rows[pick].index].config;
}

RunConfig resolve_auto_schedule(const RunConfig& deck, const JobOptions& options,
                                Communicator& comm, DeviceContext& device) {
  const int ranks = comm.size();
  const std::vector<AutoCandidate> list = auto_candidates(deck, ranks);
  const std::string run_dir = run_directory(deck, options);
  const LinkCost link = measure_link(comm);  // collective; unused when resuming
  RunLog log(comm.rank() == 0, options.quiet);
  std::unique_ptr<RunDirLock> lock;  // rank 0, until the job takes it
  AutoRanking ranking;
  ScheduleChoice choice;
  std::vector<int64_t> to_measure;  // candidate indices; rank 0 decides
  bool decided = false;
  agree_on_failure(comm, [&] {
    if (comm.rank() != 0) return;
    create_run_directory(run_dir);
    lock = std::make_unique<RunDirLock>(run_dir);
    const ResumeRequest resume = resume_request(deck, options);
    // An earlier run here: refused, or removed (--overwrite), before the trials and auto.csv are
    // written, so that the job finds only this run's.
    const std::string earlier = options.guard_earlier_run
                                    ? check_earlier_run(run_dir, options.overwrite, resume.wanted)
                                    : "";
    if (!earlier.empty() && options.overwrite)
      clear_earlier_run(run_dir, (std::filesystem::path(run_dir) / deck.checkpoint.dir).string());
    log.open(run_dir + "/log.txt");
    if (!earlier.empty() && options.overwrite)
      log.line("wavetrain: %s held %s: removed it (--overwrite)", run_dir.c_str(), earlier.c_str());
    const CheckpointInfo resumed = resumed_checkpoint_info(deck, run_dir, resume);
    if (!resumed.deck_toml.empty()) {
      choice = schedule_choice_in(resumed.deck_toml, run_dir);
      log.line(
          "wavetrain: schedule.kind = \"auto\": %s, the choice of the checkpoint being "
          "resumed",
          describe(choice).c_str());
      decided = true;
      return;
    }
    ranking = rank_on_this_machine(deck, list, link, ranks, run_dir, log, device);
    const int pick = auto_pick(ranking, deck.automatic.lossy);
    if (pick < 0 || !deck.automatic.measure) log_lines(log, ranking_text(ranking, pick));
    pick_or_throw(ranking, deck, deck.deck_path);
    if (deck.automatic.measure) to_measure = top_candidates(ranking, deck.automatic.lossy, 3);
  });
  int64_t count = int64_t(to_measure.size());
  comm.broadcast_bytes(&count, sizeof count, 0);
  to_measure.resize(size_t(count));
  comm.broadcast_bytes(to_measure.data(), count * int64_t(sizeof(int64_t)), 0);
  if (count > 0) {
    const std::vector<double> medians =
        measure_candidates(list, to_measure, deck, run_dir, comm, device, log);
    if (comm.rank() == 0) record_measurements(ranking, to_measure, medians);
    if (comm.rank() == 0)
      log_lines(log, ranking_text(ranking, auto_pick(ranking, deck.automatic.lossy)));
  }
  agree_on_failure(comm, [&] {
    if (comm.rank() != 0 || decided) return;
    const int pick = pick_or_throw(ranking, deck, deck.deck_path);
    write_auto_csv(run_dir + "/auto.csv", ranking);
    log.line("wavetrain: %s (ranking in auto.csv)", auto_reason(ranking, pick).c_str());
    choice = schedule_choice(list[ranking.rows[pick].index].config);
  });
  comm.broadcast_bytes(&choice, sizeof choice, 0);
  return with_schedule_choice(deck, choice);
}

}  // namespace wt

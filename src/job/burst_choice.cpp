#include "job/burst_choice.hpp"

#include <algorithm>
#include <cstdint>
#include <stdexcept>

#include "comm/failure_agreement.hpp"
#include "comm/link_probe.hpp"
#include "deck/component_options.hpp"
#include "job/stage_choice.hpp"
#include "plan/stage_planner.hpp"
#include "pricing/burst_costs.hpp"
#include "util/input_error.hpp"

namespace wt {

namespace {

std::string list_text(const std::vector<int>& counts) {
  std::string s;
  for (int c : counts) s += (s.empty() ? "" : ", ") + std::to_string(c);
  return s;
}

// DeepPool's planner on this machine: layer times from the measured profile (profile.h5, measured
// when missing), transfers and allreduces priced with the link measured between ranks 0 and 1.
BurstPlan plan_on_this_machine(const RunConfig& config, const Graph& graph,
                               const std::vector<PlanningUnit>& units, const LinkCost& link,
                               int ranks, const std::string& run_dir, RunLog& log,
                               DeviceContext& device) {
  StagePlanOptions options = stage_plan_options(config);
  options.stage_batch = config.train.global_batch;
  const int64_t batch = config.train.global_batch;
  for (int g : burst_counts(ranks, batch)) options.profile_batches.push_back(batch / g);
  const ObtainedProfile obtained =
      obtain_layer_profile(options, graph, run_dir, ProfileCache::ReadWrite, device);
  for (const std::string& w : obtained.warnings) log.warning("%s", w.c_str());
  const DeviceModel machine = measured_machine(link.alpha_s, link.bytes_per_s, ranks, 0);
  const CostModel costs(graph, {}, machine, &obtained.profile,
                        optimizer_state_floats(config.optimizer.kind, config.optimizer.momentum));
  return plan_burst(burst_cost_table(costs, units, burst_counts(ranks, batch), batch,
                                     burst_cost_options(config, graph)),
                    burst_planner_options(config));
}

}  // namespace

BurstOptions burst_planner_options(const RunConfig& config) {
  BurstOptions options;
  options.amp_limit = config.burst.amp_limit;
  options.amp_exempt_s = config.burst.amp_exempt_s;
  options.admission = burst_admission(config.burst.cost_model);
  return options;
}

BurstCostOptions burst_cost_options(const RunConfig& config, const Graph& graph) {
  BurstCostOptions options;
  options.model = config.burst.cost_model;
  options.bucket_bytes = config.schedule.bucket_bytes;
  options.graph = &graph;
  return options;
}

std::vector<int> forced_burst_counts(const RunConfig& config, const Graph& graph, int ranks) {
  const std::vector<PlanningUnit> units = burst_units(graph);
  std::vector<int> counts;
  try {
    counts = unit_counts_from_nodes(graph, units, config.burst.ranks);
  } catch (const std::invalid_argument& e) {
    throw deck_error(config, "burst.ranks", e.what());
  }
  // The candidates before the batch filters them (a batch of 0 divides by every count).
  const std::vector<int> allowed = burst_counts(ranks, 0);
  for (int g : counts) {
    if (g > ranks)
      throw deck_error(
          config, "burst.ranks",
          "a unit on " + std::to_string(g) + " ranks, but the run has " + std::to_string(ranks));
    if (std::find(allowed.begin(), allowed.end(), g) == allowed.end())
      throw deck_error(config, "burst.ranks",
                       std::to_string(g) + " ranks is not a candidate count on " +
                           std::to_string(ranks) + " ranks (" + list_text(allowed) + ")");
    if (config.train.global_batch % g != 0)
      throw deck_error(config, "train.global_batch",
                       std::to_string(config.train.global_batch) +
                           " samples do not divide over the " + std::to_string(g) +
                           " ranks burst.ranks gives a unit");
  }
  return counts;
}

BurstStages choose_burst_plan(const RunConfig& config, const Graph& graph,
                              const std::string& run_dir, const ResumeRequest& resume,
                              Communicator& comm, RunLog& log, DeviceContext& device) {
  const int ranks = comm.size();
  const bool forced = !config.burst.ranks.empty();
  const std::vector<PlanningUnit> units = burst_units(graph);
  std::vector<int> forced_counts;
  agree_on_failure(comm, [&] {
    if (forced) forced_counts = forced_burst_counts(config, graph, ranks);
  });
  const LinkCost link = forced ? LinkCost{} : measure_link(comm);
  std::vector<int64_t> plan;  // stages, then cuts, then counts: what rank 0 broadcasts
  agree_on_failure(comm, [&] {
    if (comm.rank() != 0) return;
    const CheckpointInfo resumed = resumed_checkpoint_info(config, run_dir, resume);
    BurstStages choice;
    if (!resumed.stage_ranks.empty() && resumed.cuts.size() + 1 != resumed.stage_ranks.size())
      throw InputError(run_dir, 0, "stage_ranks",
                       "the checkpoint's burst plan has " +
                           std::to_string(resumed.stage_ranks.size()) + " stages but " +
                           std::to_string(resumed.cuts.size()) + " cuts (damaged checkpoint?)");
    if (!resumed.stage_ranks.empty()) {
      choice.cuts.assign(resumed.cuts.begin(), resumed.cuts.end());
      choice.stage_ranks.assign(resumed.stage_ranks.begin(), resumed.stage_ranks.end());
      const BurstStages asked = forced ? burst_stages(units, forced_counts) : choice;
      if (asked.stage_ranks != choice.stage_ranks || asked.cuts != choice.cuts)
        log.line(
            "wavetrain: burst.ranks differs from the plan of the checkpoint being resumed: using "
            "the checkpoint's plan (the step resumes the model it trained); start a new run "
            "directory to train with burst.ranks");
      else
        log.line("wavetrain: burst plan of the checkpoint being resumed");
    } else if (forced) {
      choice = burst_stages(units, forced_counts);
      log.line("wavetrain: burst plan forced by burst.ranks");
    } else {
      const BurstPlan p =
          plan_on_this_machine(config, graph, units, link, ranks, run_dir, log, device);
      std::vector<int> counts;
      for (const BurstUnitPlan& u : p.units) counts.push_back(u.count);
      choice = burst_stages(units, counts);
      log.line("wavetrain: burst plan: predicted step %.3f ms (link %.1f us + %.2f GB/s)",
               p.step_s * 1e3, link.alpha_s * 1e6, link.bytes_per_s / 1e9);
    }
    for (int g : choice.stage_ranks)
      if (g > ranks)  // only a resumed plan can: a forced one was checked above
        throw InputError(run_dir, 0, "checkpoint burst plan",
                         "the checkpoint being resumed runs a stage on " + std::to_string(g) +
                             " ranks, but this run has " + std::to_string(ranks) +
                             ": resume it on at least " + std::to_string(g) +
                             " ranks, or start a new run directory");
    std::string segments;  // as --show-plan prints them: [first..last node] on count
    for (size_t s = 0; s < choice.stage_ranks.size(); ++s) {
      const int first = s == 0 ? 0 : choice.cuts[s - 1];
      const int last = (s < choice.cuts.size() ? choice.cuts[s] : int(graph.nodes.size())) - 1;
      segments += " [" + std::to_string(first) + ".." + std::to_string(last) + "] on " +
                  std::to_string(choice.stage_ranks[s]);
    }
    log.line("wavetrain: burst segments:%s", segments.c_str());
    plan.push_back(int64_t(choice.stage_ranks.size()));
    plan.insert(plan.end(), choice.cuts.begin(), choice.cuts.end());
    plan.insert(plan.end(), choice.stage_ranks.begin(), choice.stage_ranks.end());
  });
  wait_for_root_quietly(comm);
  int64_t stages = plan.empty() ? 0 : plan[0];
  comm.broadcast_bytes(&stages, sizeof stages, 0);
  if (stages < 1) throw std::logic_error("burst: rank 0 decided no plan");
  plan.resize(size_t(2 * stages));
  comm.broadcast_bytes(plan.data(), int64_t(plan.size() * sizeof(int64_t)), 0);
  BurstStages choice;
  choice.cuts.assign(plan.begin() + 1, plan.begin() + stages);
  choice.stage_ranks.assign(plan.begin() + stages, plan.end());
  return choice;
}

}  // namespace wt

#include "app/show_plan.hpp"

#include <chrono>

#include "app/text_format.hpp"
#include "job/burst_choice.hpp"
#include "job/deck_burst_plan.hpp"
#include "plan/burst_planner.hpp"
#include "plan/layer_profile_file.hpp"
#include "pricing/burst_costs.hpp"
#include "pricing/device_model.hpp"
#include "util/input_error.hpp"

namespace wt {

void show_burst_plan(const RunConfig& config, const ShowPlanRequest& request, std::ostream& out) {
  const DeviceModel device = load_device_model(request.device);
  const Graph graph = Graph::load(config.model.file);
  LayerProfile profile;
  if (!request.profile.empty()) profile = load_checked_profile(request.profile, graph);
  const CostModel costs(graph, {}, device, request.profile.empty() ? nullptr : &profile,
                        optimizer_state_floats(config.optimizer.kind, config.optimizer.momentum));
  const int64_t batch = config.train.global_batch;
  const bool forced = !config.burst.ranks.empty();
  const auto t0 = std::chrono::steady_clock::now();
  const BurstPlan plan = deck_burst_plan(config, graph, costs, request.ranks);
  const double planning_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  const BurstOptions options = burst_planner_options(config);
  const std::vector<PlanningUnit> units = burst_units(graph);
  const std::vector<int> counts = burst_counts(request.ranks, batch);
  const BurstCosts table =
      burst_cost_table(costs, units, counts, batch, burst_cost_options(config, graph));
  out << "burst plan: " << graph.name << ", global batch " << batch << ", " << request.ranks
      << " rank(s) of " << device.name << ", amp_limit " << format_number("%g", options.amp_limit)
      << ", cost model " << config.burst.cost_model << ", layer times "
      << (request.profile.empty() ? std::string("roofline") : "measured " + request.profile)
      << (forced ? ", forced by burst.ranks" : "") << "\n";
  std::vector<std::string> names;
  for (const PlanningUnit& u : units) names.push_back(u.name);
  out << burst_plan_table(plan, names);
  out << "segments:";
  for (const BurstPlan::Segment& s : plan.segments())
    out << " [" << units[s.unit_begin].node_begin << ".." << units[s.unit_end - 1].node_end - 1
        << "] on " << s.count;
  out << "\n";
  // Data parallelism on all N ranks, priced as the planner prices any plan.
  const double dp =
      price_burst_plan(table, options, std::vector<int>(units.size(), counts.back())).step_s;
  out << "data parallel on " << counts.back() << " ranks: " << format_number("%.3f", dp * 1e3)
      << " ms, " << format_number("%.3f", dp * counts.back() * 1e3) << " GPU-ms; burst/DP step "
      << format_number("%.3f", plan.step_s / dp) << "\n";
  out << "planned " << units.size() << " units x " << counts.size() << " counts in "
      << format_number("%.3f", planning_s * 1e3) << " ms\n";
}

}  // namespace wt

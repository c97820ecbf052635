#include "app/inspect.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "app/text_format.hpp"
#include "deck/component_options.hpp"
#include "device/device_context.hpp"
#include "exec/schedule_input.hpp"
#include "job/burst_choice.hpp"
#include "model/model.hpp"
#include "plan/burst_stages.hpp"
#include "plan/layer_profile_file.hpp"
#include "plan/stage_planner.hpp"
#include "pricing/burst_costs.hpp"
#include "sched/cycle_table.hpp"
#include "sched/schedule_registry.hpp"
#include "util/input_error.hpp"

namespace wt {

namespace {

// The model cut as the deck's schedule would cut it on `ranks` ranks, with the run directory's
// cached layer profile (or one measured now; nothing is written).
Model load_model(const RunConfig& config, int ranks, const std::string& run_dir,
                 DeviceContext& device) {
  Graph graph = Graph::load(config.model.file);
  const StagePlan plan = plan_stages(stage_plan_options(config), graph,
                                     ScheduleRegistry::stage_count(config.schedule.kind, ranks),
                                     run_dir, ProfileCache::ReadOnly, device);
  return Model(std::move(graph), device.allocator(), plan.cuts);
}

// "F1.3": forward of stage 1 on batch 3; "B0.0.2": backward of stage 0 on part 2 of batch 0.
std::string compute_label(const Instruction& ins) {
  std::string l = ins.op == OpCode::Forward ? "F" : "B";
  l += std::to_string(ins.stage);
  if (ins.batch >= 0) l += "." + std::to_string(ins.batch);
  if (ins.batch >= 0 && ins.parts > 1) l += "." + std::to_string(ins.part);
  if (ins.node_begin >= 0)
    l += "[" + std::to_string(ins.node_begin) + "," + std::to_string(ins.node_end) + ")";
  return l;
}

// The compute of every rank and stream per cycle (the shape of Wavelet's Figure 10), then each
// stream's instructions grouped by the cycle they are issued in.
void print_cycle_table(const Program& p, std::ostream& out) {
  const CycleTable table = assign_cycles(p);
  std::vector<std::pair<int, int>> columns;  // (rank, stream)
  for (int r = 0; r < p.world_size; ++r)
    for (size_t s = 0; s < p.ranks[r].streams.size(); ++s) columns.emplace_back(r, int(s));
  std::vector<std::vector<std::string>> cells(table.cycles,
                                              std::vector<std::string>(columns.size()));
  size_t width = 6;
  for (size_t c = 0; c < columns.size(); ++c) {
    const auto [r, s] = columns[c];
    const auto& stream = p.ranks[r].streams[s];
    for (size_t i = 0; i < stream.size(); ++i) {
      const int cycle = table.cycle[r][s][i];
      if (cycle < 0 || (stream[i].op != OpCode::Forward && stream[i].op != OpCode::Backward))
        continue;
      cells[cycle][c] = compute_label(stream[i]);
      width = std::max(width, cells[cycle][c].size() + 2);
    }
  }
  out << "compute per cycle (Fs.b / Bs.b: forward / backward of stage s on batch b[.part]; one "
         "cycle per compute, communication free):\n";
  auto pad = [&](const std::string& x) {
    return x + std::string(width - std::min(width, x.size()), ' ');
  };
  auto end_row = [&out](std::string row) {  // no trailing blanks
    row.erase(row.find_last_not_of(' ') + 1);
    out << row << "\n";
  };
  std::string row = pad("cycle");
  for (const auto& [r, s] : columns)
    row += pad("r" + std::to_string(r) +
               (p.ranks[r].streams.size() > 1 ? ".s" + std::to_string(s) : ""));
  end_row(row);
  for (int cycle = 0; cycle < table.cycles; ++cycle) {
    row = pad(std::to_string(cycle));
    for (size_t c = 0; c < columns.size(); ++c)
      row += pad(cells[cycle][c].empty() ? "." : cells[cycle][c]);
    end_row(row);
  }
  for (const auto& [r, s] : columns) {
    out << "rank " << r << " stream " << s << ":\n";
    const auto& stream = p.ranks[r].streams[s];
    int shown = -2;
    for (size_t i = 0; i < stream.size(); ++i) {
      const int cycle = table.cycle[r][s][i];
      if (cycle != shown) {
        out << (cycle < 0 ? std::string("  never reached:\n")
                          : "  cycle " + std::to_string(cycle) + ":\n");
        shown = cycle;
      }
      out << "    " << i << ": " << stream[i].str() << "\n";
    }
  }
}

}  // namespace

void show_stages(const RunConfig& config, int ranks, const std::string& run_dir,
                 std::ostream& out) {
  const int stage_count = ScheduleRegistry::stage_count(config.schedule.kind, ranks);
  DeviceContext device(static_cast<size_t>(config.device.memory_limit));
  configure_allocator(config, device.allocator());
  Graph graph = Graph::load(config.model.file);
  StagePlan plan = plan_stages(stage_plan_options(config), graph, stage_count, run_dir,
                               ProfileCache::ReadOnly, device);
  // Times are shown whenever the deck balances by profile, whatever decided the cut.
  std::string time_source = plan.basis == "profile" ? "profiled" : "";
  if (plan.node_seconds.empty() && config.schedule.balance == "profile") {
    try {
      ObtainedProfile p = obtain_layer_profile(stage_plan_options(config), graph, run_dir,
                                               ProfileCache::ReadOnly, device);
      plan.warnings.insert(plan.warnings.end(), p.warnings.begin(), p.warnings.end());
      plan.node_seconds = node_seconds(p.profile, stage_batch(config));
      time_source = p.measured ? "measured now" : "profile.h5, cached";
    } catch (const std::exception& e) {
      plan.warnings.push_back(std::string("layer profiling failed: ") + e.what());
    }
  } else if (plan.node_seconds.empty()) {
    // Balanced by FLOPs: a cached profile still prices the cut, for comparison; none is measured.
    const std::string cached = (std::filesystem::path(run_dir) / "profile.h5").string();
    try {
      if (!run_dir.empty() && std::filesystem::exists(cached)) {
        const LayerProfile p = load_layer_profile(cached);
        if (profile_mismatch(p, graph).empty()) {
          plan.node_seconds = node_seconds(p, stage_batch(config));
          time_source = "profile.h5, cached; not used for the cut";
        }
      }
    } catch (const InputError& e) {
      plan.warnings.push_back(std::string("unusable cached layer profile: ") + e.what());
    }
  }
  const bool timed = !plan.node_seconds.empty();
  for (const std::string& w : plan.warnings) out << "warning: " << w << "\n";
  Model model(std::move(graph), device.allocator(), plan.cuts);
  const auto& nodes = model.graph.nodes;
  out << "model " << model.graph.name << " (" << config.model.file << "), input "
      << shape_str(model.graph.input_shape) << "\n"
      << plan.description << "; schedule " << config.schedule.kind << " on " << ranks
      << " rank(s): " << model.stages.size() << " stage(s)\n";
  if (timed)
    out << "times: forward+backward of " << stage_batch(config) << " samples ("
        << (time_source.empty() ? "profiled" : time_source) << ")\n";
  char line[320];
  std::snprintf(line, sizeof line, "%-4s %-14s %-22s %-14s %10s %12s %10s %10s\n", "#", "layer",
                "type", "output", "params", "MFLOP/sample", "act KB/smp", timed ? "ms" : "");
  out << line;
  for (size_t s = 0; s < model.stages.size(); ++s) {
    const Stage& st = model.stages[s];
    for (int n = st.node_begin; n < st.node_end; ++n) {
      const Node& node = nodes[n];
      std::snprintf(line, sizeof line, "%-4d %-14s %-22s %-14s %10lld %12.3f %10.1f %10s\n", n,
                    node.name.c_str(), node.type.c_str(), shape_str(node.out_shape).c_str(),
                    static_cast<long long>(st.node_count[n - st.node_begin]),
                    node.layer->flops_per_sample() / 1e6,
                    shape_numel(node.out_shape) * 4.0 / 1024.0,
                    timed ? format_number("%.3f", plan.node_seconds[n] * 1e3).c_str() : "");
      out << line;
    }
  }
  // Per stage: what the cut balances (time, else FLOPs), what it holds and what it sends on.
  out << "\n";
  std::snprintf(line, sizeof line, "%-6s %-8s %-26s %10s %12s %12s %10s %16s\n", "stage", "nodes",
                "layers", timed ? "ms" : "", "MFLOP/smp", "params", "param MB", "out act B/smp");
  out << line;
  std::vector<double> cost;
  for (size_t s = 0; s < model.stages.size(); ++s) {
    const Stage& st = model.stages[s];
    double seconds = 0, flops = 0;
    for (int n = st.node_begin; n < st.node_end; ++n) {
      flops += nodes[n].layer->flops_per_sample();
      if (timed) seconds += plan.node_seconds[n];
    }
    cost.push_back(timed ? seconds : flops);
    const bool last = s + 1 == model.stages.size();
    const std::string range = std::to_string(st.node_begin) + "-" + std::to_string(st.node_end - 1);
    const std::string names =
        nodes[st.node_begin].name +
        (st.node_end - st.node_begin > 1 ? ".." + nodes[st.node_end - 1].name : std::string());
    std::snprintf(
        line, sizeof line, "%-6zu %-8s %-26s %10s %12.2f %12lld %10.2f %16s\n", s, range.c_str(),
        names.c_str(), timed ? format_number("%.2f", seconds * 1e3).c_str() : "", flops / 1e6,
        static_cast<long long>(st.param_count()), st.param_count() * 4.0 / 1048576.0,
        last ? "-"
             : format_number("%.0f", shape_numel(nodes[st.node_end - 1].out_shape) * 4.0).c_str());
    out << line;
  }
  double max_cost = 0, sum = 0;
  for (double c : cost) {
    max_cost = std::max(max_cost, c);
    sum += c;
  }
  const double mean = sum / double(cost.size());
  out << "imbalance (max/mean stage " << (timed ? "time" : "FLOPs")
      << "): " << format_number("%.3f", mean > 0 ? max_cost / mean : 1.0) << "\n";
}

// burst's stages: the forced plan, else (the planner runs at training time, on the measured
// profile) every unit on every rank.
BurstStages inspected_burst_stages(const RunConfig& config, int ranks, std::ostream& out) {
  const Graph graph = Graph::load(config.model.file);
  const std::vector<PlanningUnit> units = burst_units(graph);
  if (!config.burst.ranks.empty())
    return burst_stages(units, forced_burst_counts(config, graph, ranks));
  out << "burst.ranks is not set: the trainer plans at run time on the measured profile "
         "(--show-plan prints a plan for a device); shown: every unit on all "
      << ranks << " ranks\n";
  return burst_stages(units, std::vector<int>(units.size(), ranks));
}

void show_schedule(const RunConfig& config, int ranks, const std::string& run_dir,
                   std::ostream& out) {
  DeviceContext device(static_cast<size_t>(config.device.memory_limit));
  configure_allocator(config, device.allocator());
  BurstStages burst;
  if (config.schedule.kind == "burst") burst = inspected_burst_stages(config, ranks, out);
  Model model = config.schedule.kind == "burst"
                    ? Model(Graph::load(config.model.file), device.allocator(), burst.cuts)
                    : load_model(config, ranks, run_dir, device);
  ScheduleInput in = make_schedule_input(model, config.schedule, config.train.global_batch, ranks);
  in.stage_ranks = burst.stage_ranks;
  Program p;
  try {
    p = ScheduleRegistry::generate(config.schedule.kind, in);
  } catch (const std::invalid_argument& e) {
    throw InputError(config.deck_path, 0, "schedule.kind",
                     "'" + config.schedule.kind + "': " + e.what());
  }
  out << "schedule " << p.schedule << " on " << p.world_size << " rank(s): " << p.slots
      << " batch slot(s) per rank, " << p.global_batches << " global batch(es) per step\n";
  print_cycle_table(p, out);
}

}  // namespace wt

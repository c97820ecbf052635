#include "app/inspect.hpp"

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "deck/input_error.hpp"
#include "exec/schedule_input.hpp"
#include "model/model.hpp"
#include "model/stage_cuts.hpp"
#include "sched/cycle_table.hpp"
#include "sched/schedule_registry.hpp"

namespace wt {

namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// The model cut as the deck's schedule would cut it on `ranks` ranks.
Model load_model(const RunConfig& config, int ranks) {
  Graph graph = Graph::load(config.model.file);
  const std::vector<int> cuts =
      resolve_cuts(config, graph, ScheduleRegistry::stage_count(config.schedule.kind, ranks));
  return Model(std::move(graph), cuts);
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

void show_stages(const RunConfig& config, int ranks, std::ostream& out) {
  Model model = load_model(config, ranks);
  const auto& nodes = model.graph.nodes;
  char line[256];
  std::snprintf(line, sizeof line, "%-4s %-14s %-14s %-18s %10s %12s %12s\n", "#", "layer", "type",
                "output", "params", "MFLOP/sample", "act KB/smp");
  out << "model " << model.graph.name << " (" << config.model.file << "), input "
      << shape_str(model.graph.input_shape) << "\n"
      << line;
  for (size_t s = 0; s < model.stages.size(); ++s) {
    const Stage& st = model.stages[s];
    double flops = 0, act = 0;
    for (int n = st.node_begin; n < st.node_end; ++n) {
      const Node& node = nodes[n];
      const double f = node.layer->flops_per_sample() / 1e6;
      const double a = shape_numel(node.out_shape) * 4.0 / 1024.0;
      flops += f;
      act += a;
      std::snprintf(line, sizeof line, "%-4d %-14s %-14s %-18s %10lld %12s %12s\n", n,
                    node.name.c_str(), node.type.c_str(), shape_str(node.out_shape).c_str(),
                    static_cast<long long>(st.node_count[n - st.node_begin]),
                    fmt("%.3f", f).c_str(), fmt("%.1f", a).c_str());
      out << line;
    }
    std::snprintf(line, sizeof line,
                  "stage %zu: layers %d-%d, %lld parameters, %.2f MFLOP/sample (fwd+bwd), %.1f KB "
                  "activations/sample\n",
                  s, st.node_begin, st.node_end - 1, static_cast<long long>(st.param_count()),
                  flops, act);
    out << line;
  }
}

void show_schedule(const RunConfig& config, int ranks, std::ostream& out) {
  Model model = load_model(config, ranks);
  const ScheduleInput in = make_schedule_input(model, config, ranks);
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

#include "app/inspect.hpp"

#include <cstdio>
#include <stdexcept>
#include <string>

#include "deck/input_error.hpp"
#include "exec/schedule_input.hpp"
#include "model/model.hpp"
#include "model/stage_cuts.hpp"
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
  for (int r = 0; r < p.world_size; ++r) {
    const auto& streams = p.ranks[r].streams;
    for (size_t s = 0; s < streams.size(); ++s) {
      out << "rank " << r << " stream " << s << ":\n";
      for (size_t i = 0; i < streams[s].size(); ++i)
        out << "  " << i << ": " << streams[s][i].str() << "\n";
    }
  }
}

}  // namespace wt

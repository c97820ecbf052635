#include "model/stage_cuts.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

#include "util/input_error.hpp"

namespace wt {

std::vector<int> clean_cut_points(const Graph& graph) {
  const int n = static_cast<int>(graph.nodes.size());
  // earliest[c]: the smallest node index (or -1 for the graph input) read by any node >= c.
  std::vector<int> earliest(n + 1, n);
  for (int i = n - 1; i >= 0; --i) {
    int e = earliest[i + 1];
    for (int src : graph.nodes[i].inputs) e = std::min(e, src);
    earliest[i] = e;
  }
  std::vector<int> points;
  for (int c = 1; c < n; ++c)
    if (earliest[c] >= c - 1) points.push_back(c);
  return points;
}

void check_stage_count(const Graph& graph, int stages) {
  const size_t points = clean_cut_points(graph).size();
  if (stages > 1 && points < size_t(stages - 1))
    throw std::invalid_argument("model '" + graph.name + "' has " + std::to_string(points + 1) +
                                " places to cut it into stages at most; " + std::to_string(stages) +
                                " stages were asked for");
}

std::vector<int> balanced_cuts(const Graph& graph, int stages) {
  // Every layer costs a little even without FLOPs (launch, memory traffic).
  double total = 0;
  for (const Node& node : graph.nodes) total += node.layer->flops_per_sample();
  const double floor_cost = std::max(total, 1.0) * 1e-3;
  std::vector<double> cost;
  for (const Node& node : graph.nodes) cost.push_back(node.layer->flops_per_sample() + floor_cost);
  return balanced_cuts(graph, stages, cost);
}

std::vector<int> balanced_cuts(const Graph& graph, int stages,
                               const std::vector<double>& node_cost) {
  if (stages <= 1) return {};
  check_stage_count(graph, stages);
  const int n = static_cast<int>(graph.nodes.size());
  if (node_cost.size() != graph.nodes.size())
    throw std::invalid_argument("balanced_cuts: " + std::to_string(node_cost.size()) +
                                " costs for " + std::to_string(n) + " nodes");
  const std::vector<int> points = clean_cut_points(graph);
  std::vector<double> prefix(n + 1, 0.0);
  for (int i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + node_cost[i];
  // bounds: 0, the clean points, n. best[k][j]: the smallest maximum stage cost covering nodes
  // [0, bounds[j]) with k stages.
  std::vector<int> bounds{0};
  bounds.insert(bounds.end(), points.begin(), points.end());
  bounds.push_back(n);
  const int m = static_cast<int>(bounds.size());
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<std::vector<double>> best(stages + 1, std::vector<double>(m, inf));
  std::vector<std::vector<int>> from(stages + 1, std::vector<int>(m, -1));
  best[0][0] = 0;
  for (int k = 1; k <= stages; ++k)
    for (int j = 1; j < m; ++j)
      for (int i = 0; i < j; ++i) {
        if (best[k - 1][i] == inf) continue;
        const double cost = std::max(best[k - 1][i], prefix[bounds[j]] - prefix[bounds[i]]);
        if (cost < best[k][j]) {
          best[k][j] = cost;
          from[k][j] = i;
        }
      }
  std::vector<int> cuts;
  for (int k = stages, j = m - 1; k > 1; --k) {
    j = from[k][j];
    cuts.push_back(bounds[j]);
  }
  std::reverse(cuts.begin(), cuts.end());
  return cuts;
}

std::vector<int> resolve_cuts(const StageCutOptions& config, const Graph& graph, int stages) {
  std::vector<int> cuts(config.cuts.begin(), config.cuts.end());
  if (cuts.empty()) {
    try {
      return balanced_cuts(graph, stages);
    } catch (const std::invalid_argument& e) {
      throw InputError(config.deck_path, 0, "schedule.kind",
                       "'" + config.schedule_kind + "': " + e.what());
    }
  }
  if (stages > 1 && static_cast<int>(cuts.size()) + 1 != stages)
    throw InputError(config.deck_path, 0, "schedule.cuts",
                     std::to_string(cuts.size()) + " cut(s) make " +
                         std::to_string(cuts.size() + 1) + " stages, but schedule '" +
                         config.schedule_kind + "' here needs " + std::to_string(stages));
  const int nodes = static_cast<int>(graph.nodes.size());
  for (int c : cuts)
    if (c < 1 || c >= nodes)
      throw InputError(config.deck_path, 0, "schedule.cuts",
                       "cut " + std::to_string(c) + " is out of range: model '" + graph.name +
                           "' has " + std::to_string(nodes) +
                           " nodes, so a cut (the first node of a stage) is 1 to " +
                           std::to_string(nodes - 1));
  const std::vector<int> clean = clean_cut_points(graph);
  for (int c : cuts)
    if (stages > 1 && !std::binary_search(clean.begin(), clean.end(), c))
      throw InputError(config.deck_path, 0, "schedule.cuts",
                       "a cut before node " + std::to_string(c) +
                           " is not clean: later layers read tensors from before node " +
                           std::to_string(c - 1));
  return cuts;
}

}  // namespace wt

#include "plan/burst_costs.hpp"

#include <algorithm>
#include <set>

namespace wt {

namespace {

bool is_follower(const std::string& type) {
  static const std::set<std::string> followers = {
      "relu",    "gelu",    "batchnorm2d",  "layernorm",
      "dropout", "flatten", "softmax_xent", "token_softmax_xent"};
  return followers.count(type) != 0;
}

// Whether a boundary before node `j` leaves a single live tensor (node j-1's output): no node
// from j on reads anything older than j-1.
std::vector<char> single_tensor_boundaries(const Graph& graph) {
  const int n = static_cast<int>(graph.nodes.size());
  std::vector<char> ok(size_t(n), 1);
  ok[0] = 1;
  int oldest_read_from_here = n;  // the oldest node read by any node >= j
  for (int j = n - 1; j >= 1; --j) {
    for (int src : graph.nodes[size_t(j)].inputs)
      oldest_read_from_here = std::min(oldest_read_from_here, src == kGraphInput ? -1 : src);
    ok[size_t(j)] = oldest_read_from_here >= j - 1;
  }
  return ok;
}

}  // namespace

std::vector<PlanningUnit> burst_units(const Graph& graph) {
  const std::vector<char> boundary = single_tensor_boundaries(graph);
  std::vector<PlanningUnit> units;
  for (int j = 0; j < static_cast<int>(graph.nodes.size()); ++j) {
    const Node& node = graph.nodes[size_t(j)];
    const bool starts = units.empty() || (boundary[size_t(j)] && !is_follower(node.type));
    if (starts) {
      units.push_back({j, j + 1, node.name});
      continue;
    }
    PlanningUnit& u = units.back();
    u.node_end = j + 1;
    u.name = graph.nodes[size_t(u.node_begin)].name + ".." + node.name;
  }
  return units;
}

std::vector<int> unit_counts_from_nodes(const Graph& graph, const std::vector<PlanningUnit>& units,
                                        const std::vector<int64_t>& node_counts) {
  if (node_counts.size() != graph.nodes.size())
    throw std::invalid_argument("has " + std::to_string(node_counts.size()) + " entries; model '" +
                                graph.name + "' has " + std::to_string(graph.nodes.size()) +
                                " nodes, one count each");
  std::vector<int> counts;
  for (const PlanningUnit& u : units) {
    const int64_t count = node_counts[size_t(u.node_begin)];
    for (int n = u.node_begin + 1; n < u.node_end; ++n)
      if (node_counts[size_t(n)] != count)
        throw std::invalid_argument(
            "node " + std::to_string(n) + " ('" + graph.nodes[size_t(n)].name + "') has " +
            std::to_string(node_counts[size_t(n)]) + " ranks but runs where '" +
            graph.nodes[size_t(u.node_begin)].name + "' runs (" + std::to_string(count) +
            "): a follower, or a node inside a residual block, takes its unit's count");
    counts.push_back(static_cast<int>(count));
  }
  return counts;
}

BurstStages burst_stages(const std::vector<PlanningUnit>& units,
                         const std::vector<int>& unit_counts) {
  BurstStages stages;
  for (size_t u = 0; u < units.size(); ++u) {
    if (u > 0 && unit_counts[u] == unit_counts[u - 1]) continue;
    if (u > 0) stages.cuts.push_back(units[u].node_begin);
    stages.stage_ranks.push_back(unit_counts[u]);
  }
  return stages;
}

std::vector<int> burst_counts(int ranks, int64_t global_batch) {
  std::vector<int> counts;
  for (int g = 1; g <= ranks; g *= 2)
    if (global_batch % g == 0) counts.push_back(g);
  if (counts.back() != ranks && global_batch % ranks == 0) counts.push_back(ranks);
  return counts;
}

BurstCosts burst_cost_table(const CostModel& costs, const std::vector<PlanningUnit>& units,
                            const std::vector<int>& counts, int64_t global_batch) {
  BurstCosts t;
  t.counts = counts;
  const size_t n = counts.size();
  for (const PlanningUnit& u : units) {
    std::vector<double> comp, sync;
    std::vector<std::vector<double>> comm(n, std::vector<double>(n, 0.0));
    const int64_t grads = costs.grad_bytes(0, u.node_begin, u.node_end);
    const int64_t row_bytes =
        u.node_begin == 0 ? 0 : costs.saved_bytes(0, u.node_begin - 1, u.node_begin, 1);
    for (size_t k = 0; k < n; ++k) {
      const int g = counts[k];
      const int64_t samples = global_batch / g;
      comp.push_back(costs.forward_s(0, u.node_begin, u.node_end, samples) +
                     costs.backward_s(0, u.node_begin, u.node_end, samples));
      std::vector<int> group(static_cast<size_t>(g));
      for (int r = 0; r < g; ++r) group[size_t(r)] = r;
      sync.push_back(g == 1 || grads == 0 ? 0.0 : costs.allreduce_s(grads, group));
      for (size_t h = 0; h < n; ++h) {
        if (h == k || u.node_begin == 0) continue;
        const int64_t from = global_batch / counts[h], stay = std::min(from, samples);
        const int64_t moved = std::max(from, samples) - stay;  // max(egress, ingress), in rows
        comm[h][k] = 2 * costs.message_s(moved * row_bytes, 0, std::max(counts[h], g) - 1);
      }
    }
    t.comp.push_back(comp);
    t.sync.push_back(sync);
    t.comm.push_back(comm);
  }
  return t;
}

}  // namespace wt

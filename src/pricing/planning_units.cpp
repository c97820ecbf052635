#include "pricing/planning_units.hpp"

#include <algorithm>
#include <set>
#include <stdexcept>

namespace wt {

namespace {

bool is_follower(const std::string& type) {
  static const std::set<std::string> followers = {
      "relu",    "gelu",    "batchnorm2d",  "layernorm",
      "dropout", "flatten", "softmax_xent", "token_softmax_xent"};
  return followers.count(type) != 0;
}

// Nodes DeepPool has no planner layer for: they join the layer before them.
bool joins_previous_layer(const std::string& type) {
  return type == "dropout" || type == "softmax_xent" || type == "token_softmax_xent";
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
      units.push_back({j, j + 1, node.name, {{j, j + 1}}});
      continue;
    }
    PlanningUnit& u = units.back();
    u.node_end = j + 1;
    u.name = graph.nodes[size_t(u.node_begin)].name + ".." + node.name;
    if (joins_previous_layer(node.type))
      u.layers.back().second = j + 1;
    else
      u.layers.emplace_back(j, j + 1);
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

}  // namespace wt

#pragma once
// The burst planner's units (plan/burst_planner.hpp), the steps its cost table prices
// (pricing/burst_costs.hpp).
//
// Units: graph nodes, with followers fused into their producer (relu, gelu, batchnorm2d,
// layernorm, dropout, flatten and the loss: DeepPool prices a transition into them x1000, i.e.
// they always run where their producer runs), and a unit boundary only where a single tensor is
// live (so a residual block, from its branching node to its join, is one unit with one count;
// the paper's parallel branches on disjoint ranks are not planned).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "model/graph.hpp"

namespace wt {

struct PlanningUnit {
  int node_begin = 0, node_end = 0;  // nodes [begin, end)
  std::string name;                  // "conv1" or "conv1..relu1"
  // Its layers for the amplification test, [begin, end) node ranges: every node, except that
  // dropout and the loss (DeepPool has no planner layer for them) join the layer before them.
  std::vector<std::pair<int, int>> layers = {};
};

std::vector<PlanningUnit> burst_units(const Graph& graph);

// One count per unit from one count per node (burst.ranks): every node of a unit must have the
// unit's count. Throws std::invalid_argument naming the node that breaks it or a wrong length.
std::vector<int> unit_counts_from_nodes(const Graph& graph, const std::vector<PlanningUnit>& units,
                                        const std::vector<int64_t>& node_counts);

}  // namespace wt

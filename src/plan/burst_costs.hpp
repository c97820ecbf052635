#pragma once
// From a model to the burst planner's inputs (burst_planner.hpp): the planning units and their
// cost table under a cost model (a measured profile or a device's roofline).
//
// Units: graph nodes, with followers fused into their producer (relu, gelu, batchnorm2d,
// layernorm, dropout, flatten and the loss: DeepPool prices a transition into them x1000, i.e.
// they always run where their producer runs), and a unit boundary only where a single tensor is
// live (so a residual block, from its branching node to its join, is one unit with one count;
// the paper's parallel branches on disjoint ranks are not planned).
#include <cstdint>
#include <string>
#include <vector>

#include "model/graph.hpp"
#include "plan/burst_planner.hpp"
#include "sim/cost_model.hpp"

namespace wt {

struct PlanningUnit {
  int node_begin = 0, node_end = 0;  // nodes [begin, end)
  std::string name;                  // "conv1" or "conv1..relu1"
};

std::vector<PlanningUnit> burst_units(const Graph& graph);

// One count per unit from one count per node (burst.ranks): every node of a unit must have the
// unit's count. Throws std::invalid_argument naming the node that breaks it or a wrong length.
std::vector<int> unit_counts_from_nodes(const Graph& graph, const std::vector<PlanningUnit>& units,
                                        const std::vector<int64_t>& node_counts);

// A plan as the burst schedule runs it: segments (maximal runs of units with equal counts) as
// stages, each on ranks 0..count-1.
struct BurstStages {
  std::vector<int> cuts;         // first node of every stage after the first
  std::vector<int> stage_ranks;  // per stage
};
BurstStages burst_stages(const std::vector<PlanningUnit>& units,
                         const std::vector<int>& unit_counts);

// Candidate rank counts: powers of two up to `ranks`, and `ranks` itself when it is not one,
// keeping those that divide `global_batch`.
std::vector<int> burst_counts(int ranks, int64_t global_batch);

// The cost table (seconds) of `units` at global batch B, for `counts`:
//   comp(u, g): forward + backward of the unit's nodes at B/g samples per rank;
//   sync(u, g): the ring allreduce of its gradients over ranks 0..g-1 (0 for g = 1 or a unit
//     without parameters);
//   comm(u, h -> g): DeepPool's transfer with this cost model's link, 2 (alpha + max(egress,
//     ingress) / beta), egress and ingress the rows that do not stay put (min(B/h, B/g) do), for
//     the unit's input activations forward and their gradients back; 0 when h = g.
// `costs` must be built for the whole model as one stage (no cuts).
BurstCosts burst_cost_table(const CostModel& costs, const std::vector<PlanningUnit>& units,
                            const std::vector<int>& counts, int64_t global_batch);

}  // namespace wt

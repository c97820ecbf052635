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
#include <utility>
#include <vector>

#include "model/graph.hpp"
#include "plan/burst_planner.hpp"
#include "sim/cost_model.hpp"

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
// `costs` must be built for the whole model as one stage (no cuts), and outlive the table (its
// segment_sync reads it). The executor's pricing with 4 MiB buckets (BurstCostOptions{}).
BurstCosts burst_cost_table(const CostModel& costs, const std::vector<PlanningUnit>& units,
                            const std::vector<int>& counts, int64_t global_batch);

// burst.cost_model: how the table prices sync, and the planner's admission rule with it.
//   executor (default): sync as the executor runs it (sim/gradient_sync.hpp): per segment, in
//     buckets of bucket_bytes, a ring allreduce each, overlapped with the segment's backward;
//     the table's segment_sync, with `sync` holding each unit alone as a segment (for show);
//     and the optimizer step as the simulator prices it, reported beside every plan.
//   deeppool: DeepPool's public planner (parallelizationPlanner.py at cf496d7, CostSim): a
//     linear layer's sync is its gradient bytes / beta when split (no latency), 0 on one rank; a
//     conv2d's is (k*k*H_out + k*k) * 4 bytes / beta on every count (its config's filter slot
//     holds the output height: reproduced, not fixed); other layers' 0. Transfers as above
//     (with the latency). Its code's admission rule (BurstOptions::Admission::DeepPoolCode).
// Both list each unit's layers (layer_own) so the amplification test runs per layer: every node
// is a layer but dropout and the loss, which DeepPool has no layer for (they join the layer
// before them).
struct BurstCostOptions {
  std::string model = "executor";  // executor | deeppool
  int64_t bucket_bytes = 4 << 20;  // schedule.bucket_bytes
  const Graph* graph = nullptr;    // deeppool: the model (layer types and shapes); required
};
BurstCosts burst_cost_table(const CostModel& costs, const std::vector<PlanningUnit>& units,
                            const std::vector<int>& counts, int64_t global_batch,
                            const BurstCostOptions& options);

// The planner's admission rule that goes with a cost model.
BurstOptions::Admission burst_admission(const std::string& cost_model);

}  // namespace wt

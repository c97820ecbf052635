#pragma once
// DeepPool's pricing: the burst planner's cost table (plan/burst_planner.hpp) of a model's planning
// units (pricing/planning_units.hpp) under a cost model (a measured profile or a device's
// roofline).
#include <cstdint>
#include <string>
#include <vector>

#include "model/graph.hpp"
#include "pricing/burst_cost_table.hpp"
#include "pricing/cost_model.hpp"
#include "pricing/planning_units.hpp"

namespace wt {

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
//   executor (default): sync as the executor runs it (pricing/gradient_sync.hpp): per segment, in
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

}  // namespace wt

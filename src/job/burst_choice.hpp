#pragma once
// The burst schedule's plan, identical on every rank: which stages (segments) the model is cut
// into and how many ranks run each. Rank 0 decides and broadcasts, like the stage cuts
// (job/stage_choice.hpp): the resumed checkpoint's plan, the deck's forced one (burst.ranks), or
// DeepPool's planner (plan/burst_planner.hpp) on this machine's measured layer profile and link.
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "deck/run_config.hpp"
#include "device/device_context.hpp"
#include "io/run_log.hpp"
#include "job/resume_request.hpp"
#include "model/graph.hpp"
#include "plan/burst_planner.hpp"
#include "plan/burst_stages.hpp"
#include "pricing/burst_costs.hpp"

namespace wt {

// Collective. Throws InputError on every rank for a deck the plan cannot satisfy: a forced count
// that is not a candidate or breaks a planning unit (burst.ranks), a count that does not divide
// the global batch (train.global_batch), a plan wider than the run.
BurstStages choose_burst_plan(const RunConfig& config, const Graph& graph,
                              const std::string& run_dir, const ResumeRequest& resume,
                              Communicator& comm, RunLog& log, DeviceContext& device);

// The deck's [burst] planner settings: its options (limit, exemption, the cost model's admission
// rule) and its cost table's (burst.cost_model, schedule.bucket_bytes; `graph` must outlive it).
BurstOptions burst_planner_options(const RunConfig& config);
BurstCostOptions burst_cost_options(const RunConfig& config, const Graph& graph);

// The deck's forced plan checked against the graph and `ranks` (no communication): unit counts,
// one per planning unit. Throws InputError.
std::vector<int> forced_burst_counts(const RunConfig& config, const Graph& graph, int ranks);

}  // namespace wt

#pragma once
// Where to cut a layer graph into contiguous stages for model-parallel schedules. A cut before
// node c is clean when nothing from c on reads anything but node c-1 from before the cut, so one
// activation tensor crosses it. Balancing minimises the most expensive stage, by a cost per node
// (profiled seconds, plan/stage_planner.hpp) or by forward+backward FLOPs per sample.
#include <vector>

#include "model/graph.hpp"

namespace wt {

// Node indices c where a cut before c is clean, in increasing order.
std::vector<int> clean_cut_points(const Graph& graph);

// `stages - 1` clean cuts minimising the most expensive stage, node i costing node_cost[i]. Throws
// std::invalid_argument when the graph has too few clean cut points or the costs do not match.
std::vector<int> balanced_cuts(const Graph& graph, int stages,
                               const std::vector<double>& node_cost);

// The same, by forward+backward FLOPs per sample (plus a small floor per layer).
std::vector<int> balanced_cuts(const Graph& graph, int stages);

// Throws std::invalid_argument when `graph` cannot be cut into `stages` clean stages.
void check_stage_count(const Graph& graph, int stages);

// The deck's cuts when it gives them (checked against the stage count the schedule needs), else
// FLOP-balanced ones. Throws InputError naming schedule.cuts or schedule.kind.
struct StageCutOptions {
  std::vector<int64_t> cuts;  // the deck's schedule.cuts; empty = automatic
  std::string schedule_kind;  // named in errors
  std::string deck_path;      // named in errors
};
std::vector<int> resolve_cuts(const StageCutOptions& options, const Graph& graph, int stages);

}  // namespace wt

#pragma once
// Where to cut a layer graph into contiguous stages for model-parallel schedules. A cut before
// node c is clean when nothing from c on reads anything but node c-1 from before the cut, so one
// activation tensor crosses it. Balancing is by forward+backward FLOPs per sample (a profile-based
// balance is later work).
#include <vector>

#include "deck/run_config.hpp"
#include "model/graph.hpp"

namespace wt {

// Node indices c where a cut before c is clean, in increasing order.
std::vector<int> clean_cut_points(const Graph& graph);

// `stages - 1` clean cuts minimising the most expensive stage. Throws std::invalid_argument when
// the graph has too few clean cut points.
std::vector<int> balanced_cuts(const Graph& graph, int stages);

// The deck's cuts when it gives them (checked against the stage count the schedule needs), else
// balanced ones. Throws InputError naming schedule.cuts or schedule.kind.
std::vector<int> resolve_cuts(const RunConfig& config, const Graph& graph, int stages);

}  // namespace wt

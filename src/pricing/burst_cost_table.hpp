#pragma once
// The burst planner's input (plan/burst_planner.hpp): what each planning unit costs on each
// candidate rank count. Plain data: pricing/burst_costs.hpp fills it from a cost model, the
// planner's tests by hand.
#include <cstddef>
#include <functional>
#include <vector>

namespace wt {

// Costs in seconds. counts: candidate rank counts, ascending. Indexed [unit][count index]; comm
// is [unit][predecessor's count index][this unit's count index] (unit 0's is ignored: the data
// arrives where the first unit runs).
struct BurstCosts {
  std::vector<int> counts;
  std::vector<std::vector<double>> comp;
  std::vector<std::vector<double>> sync;
  std::vector<std::vector<std::vector<double>>> comm;
  // Optional: [unit][layer][count index], each layer's own time (compute, and its sync where the
  // table prices sync per unit); the unit's incoming comm and its segment sync count for its
  // first layer. Empty: every unit is one layer.
  std::vector<std::vector<std::vector<double>>> layer_own = {};
  // Optional: the sync of units [unit_begin, unit_end) run as one segment on counts[k] ranks.
  std::function<double(int unit_begin, int unit_end, size_t k)> segment_sync = {};
  // The optimizer step after the sync, the same in every plan (rank 0 runs every segment and
  // steps the whole model): reported beside a plan's predicted step, not in it.
  double optimizer_step_s = 0;
  int units() const { return static_cast<int>(comp.size()); }
};

}  // namespace wt

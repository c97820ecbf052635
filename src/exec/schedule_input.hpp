#pragma once
// What a schedule generator is told about a model: its stages (nodes, parameter bytes,
// activation bytes at the cuts), the deck's [schedule] table, the global batch and the world.
#include <vector>

#include "model/model.hpp"
#include "sched/schedule_registry.hpp"

namespace wt {

ScheduleInput make_schedule_input(const Model& model, const ScheduleOptions& options,
                                  int64_t global_batch, int world_size);
// The same from the graph and its cuts alone, without allocating the model (the simulator).
ScheduleInput make_schedule_input(const Graph& graph, const std::vector<int>& cuts,
                                  const ScheduleOptions& options, int64_t global_batch,
                                  int world_size);

}  // namespace wt

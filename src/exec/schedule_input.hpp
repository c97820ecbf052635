#pragma once
// What a schedule generator is told about a built model: its stages (nodes, parameter bytes,
// activation bytes at the cuts), the deck's [schedule] table, the global batch and the world.
#include "deck/run_config.hpp"
#include "model/model.hpp"
#include "sched/schedule_registry.hpp"

namespace wt {

ScheduleInput make_schedule_input(const Model& model, const RunConfig& config, int world_size);

}  // namespace wt

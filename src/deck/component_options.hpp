#pragma once
// The deck's tables as the options each component takes: a component below the deck sees only
// its own small struct, never the whole RunConfig (the dependency points from the deck down).
#include "deck/run_config.hpp"
#include "mem/caching_allocator.hpp"
#include "model/stage_cuts.hpp"
#include "plan/stage_planner.hpp"

namespace wt {

// Samples one forward of one stage processes: the microbatch for pipeline schedules
// (global_batch / microbatches), the global batch otherwise. Profiles are measured and priced at
// it.
int64_t stage_batch(const RunConfig& config);

StageCutOptions stage_cut_options(const RunConfig& config);
StagePlanOptions stage_plan_options(const RunConfig& config);

// The [device] keys that tune a device context's allocator: device.release_threshold and
// device.max_split_bytes (device.memory_limit is the context's constructor argument).
void configure_allocator(const RunConfig& config, CachingAllocator& allocator);

}  // namespace wt

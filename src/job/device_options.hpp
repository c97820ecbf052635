#pragma once
// The device a rank's jobs run on, from the deck: device.kind ("auto", "cpu" and "host" are a CPU
// core), device.memory_limit, the strict device's seed (plus the rank, so ranks shuffle apart),
// and on a GPU the one this rank drives (job/run_preflight.hpp's place_on_gpu) and device.tf32.
#include "deck/run_config.hpp"
#include "device/device_context.hpp"

namespace wt {

DeviceOptions device_options(const RunConfig& cfg, int rank, int gpu);

}  // namespace wt

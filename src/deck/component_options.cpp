#include "deck/component_options.hpp"

#include <algorithm>

namespace wt {

int64_t stage_batch(const RunConfig& config) {
  if (config.schedule.kind == "pipeline")
    return std::max<int64_t>(1, config.train.global_batch / config.schedule.microbatches);
  return config.train.global_batch;
}

StageCutOptions stage_cut_options(const RunConfig& config) {
  return {config.schedule.cuts, config.schedule.kind, config.deck_path};
}

StagePlanOptions stage_plan_options(const RunConfig& config) {
  StagePlanOptions options;
  options.cuts = stage_cut_options(config);
  options.balance = config.schedule.balance;
  options.model_file = config.model.file;
  options.seed = config.run.seed;
  options.stage_batch = stage_batch(config);
  return options;
}

void configure_allocator(const RunConfig& config, CachingAllocator& allocator) {
  allocator.set_release_threshold(static_cast<size_t>(config.device.release_threshold));
  allocator.set_max_split_bytes(static_cast<size_t>(config.device.max_split_bytes));
}

}  // namespace wt

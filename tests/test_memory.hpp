#pragma once
// The tests' device memory: one allocator without a budget for the whole test binary (in the
// product, each rank's DeviceContext owns its allocator). Never destroyed, so a tensor a test
// keeps in static storage can still give its block back at exit.
#include "mem/caching_allocator.hpp"
#include "model/layer.hpp"

namespace wt::testing {

inline CachingAllocator& memory() {
  static CachingAllocator* allocator = new CachingAllocator();
  return *allocator;
}

// A layer call's context whose outputs and temporaries come from memory().
inline LayerContext layer_context() {
  LayerContext ctx;
  ctx.allocator = &memory();
  return ctx;
}

}  // namespace wt::testing

#pragma once
// The tests' device: one device context for the whole test binary (in the product, each rank
// owns one). WT_TEST_DEVICE=strict makes it the strict device (ctest runs the MPI equivalence
// tests that way too, under three WT_TEST_STRICT_SEED stream orders); default host. Never
// destroyed, so a tensor a test keeps in static storage can still give its block back at exit.
#include <cstdlib>
#include <string>
#include <vector>

#include "device/device_context.hpp"
#include "mem/caching_allocator.hpp"
#include "model/layer.hpp"

namespace wt::testing {

inline DeviceContext& device() {
  static DeviceContext* context = [] {
    const char* kind = std::getenv("WT_TEST_DEVICE");
    const char* seed = std::getenv("WT_TEST_STRICT_SEED");  // the strict device's stream order
    return new DeviceContext(0, parse_device_kind(kind && *kind ? kind : "host"),
                             seed && *seed ? std::strtoull(seed, nullptr, 10) : 20261124);
  }();
  return *context;
}

inline CachingAllocator& memory() { return device().allocator(); }

// A layer call's context whose outputs and temporaries come from memory().
inline LayerContext layer_context() {
  LayerContext ctx;
  ctx.allocator = &memory();
  ctx.ops = &device().ops();
  return ctx;
}

}  // namespace wt::testing

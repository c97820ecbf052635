#pragma once
// Gradient buckets (gang, burst): a stage's nodes cut, walking backward from its end, into ranges
// of at least bucket_bytes of parameters, so each bucket's allreduce can start as soon as backward
// has produced it and overlap the rest of backward.
#include <cstdint>
#include <utility>
#include <vector>

#include "sched/schedule_registry.hpp"

namespace wt {

// [begin, end) node ranges in backward order.
std::vector<std::pair<int, int>> gradient_buckets(const StageInfo& stage, int64_t bucket_bytes);

}  // namespace wt

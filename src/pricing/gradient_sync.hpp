#pragma once
// Gradient synchronisation as the executor runs it (gang, burst): a stage's backward in buckets
// (sched/gradient_buckets.hpp), each bucket's allreduce started as soon as its backward is done,
// the allreduces one after another on the rank's link, beside the rest of backward (or on the
// compute itself where the device's communication uses compute). One function prices a bucket
// for the simulator's AllReduce instructions and, through segment_sync, a segment's whole sync
// for the burst planner: the planner and the simulator cannot disagree on what a sync costs.
#include <cstdint>
#include <vector>

#include "pricing/cost_model.hpp"

namespace wt {

// One bucket's allreduce (nodes [node_begin, node_end) of `stage`, -1 for the whole stage) over
// `group`: a ring with 2(p-1) latencies. What the simulator charges an AllReduce instruction.
double bucket_allreduce_s(const CostModel& costs, int stage, int node_begin, int node_end,
                          const std::vector<int>& group);

struct SegmentSync {
  int buckets = 0;        // allreduces issued (0 on one rank or without parameters)
  double backward_s = 0;  // the nodes' backward at `samples`, sync excluded
  double link_s = 0;      // sum of the buckets' allreduces
  double finish_s = 0;    // from the start of backward to the last allreduce's end
  double exposed_s = 0;   // finish_s - backward_s: what the sync adds to the step
};

// Nodes [node_begin, node_end) of `stage` run backward on `group` at `samples` rows per rank,
// their gradients allreduced in buckets of at least bucket_bytes, as the executor and the
// simulator run them (the simulator's engines: one compute, one link per rank).
SegmentSync segment_sync(const CostModel& costs, int stage, int node_begin, int node_end,
                         int64_t samples, const std::vector<int>& group, int64_t bucket_bytes);

}  // namespace wt

#include "pricing/gradient_sync.hpp"

#include <algorithm>

#include "sched/gradient_buckets.hpp"

namespace wt {

double bucket_allreduce_s(const CostModel& costs, int stage, int node_begin, int node_end,
                          const std::vector<int>& group) {
  return costs.allreduce_s(costs.grad_bytes(stage, node_begin, node_end), group);
}

SegmentSync segment_sync(const CostModel& costs, int stage, int node_begin, int node_end,
                         int64_t samples, const std::vector<int>& group, int64_t bucket_bytes) {
  StageInfo nodes;  // the buckets are cut as the schedule generators cut them
  nodes.node_begin = node_begin;
  nodes.node_end = node_end;
  for (int n = node_begin; n < node_end; ++n)
    nodes.node_param_bytes.push_back(costs.grad_bytes(stage, n, n + 1));
  SegmentSync s;
  double compute = 0, link = 0;
  const bool shares_compute = costs.device().comm_uses_compute;
  for (const auto& [b, e] : gradient_buckets(nodes, std::max<int64_t>(1, bucket_bytes))) {
    const double backward = costs.backward_s(stage, b, e, samples);
    s.backward_s += backward;
    compute += backward;
    if (group.size() < 2) continue;  // a bucket without parameters is still issued (and priced)
    const double allreduce = bucket_allreduce_s(costs, stage, b, e, group);
    const double begin = std::max(compute, link);
    link = begin + allreduce;
    if (shares_compute) compute = link;  // the copy runs on the cores backward needs
    s.link_s += allreduce;
    ++s.buckets;
  }
  s.finish_s = std::max(compute, link);
  s.exposed_s = std::max(0.0, s.finish_s - s.backward_s);
  return s;
}

}  // namespace wt

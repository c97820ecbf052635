#pragma once
// Waterwave's node groups (§4.3): a job's step cut into consecutive groups by memory, so that
// co-located jobs' peaks can take turns (plan/colocate_pairing.hpp pairs them). The forward runs
// nodes first to last, allocating (activations kept for the backward); the backward runs them last
// to first, deallocating. Each phase is cut where a group's net allocation reaches split_bytes in
// size, with a forced cut at the forward/backward turn (research/seeds-next.md §3.4: in the
// executor's order, which is the model file's, rather than the paper's BFS depth). The
// optimizer's Step joins the last group. Cut with sched/overlap_groups' cut_ranges, as tick-tock's
// overlap groups are.
#include <cstdint>
#include <string>
#include <vector>

namespace wt {

// One node's forward or backward, as the allocator saw it in a solo profiling step: the change in
// bytes in use across it, and its transient peak above the bytes in use when it began.
struct NodePhaseMemory {
  int64_t net = 0;
  int64_t peak = 0;
};

struct NodeMemoryProfile {
  std::vector<NodePhaseMemory> forward;   // by node
  std::vector<NodePhaseMemory> backward;  // by node (run last to first)
};

struct NodeGroup {
  bool forward = true;  // a forward group (an ANG, net >= 0 for a model whose nodes keep
                        // activations), else a backward group (a DNG)
  int node_begin = 0;   // nodes [node_begin, node_end): a forward group runs them upwards,
  int node_end = 0;     // a backward group downwards
  int64_t net = 0;      // the group's net allocation
  int64_t peak = 0;     // its transient peak above the bytes in use when it begins
  bool steps = false;   // the optimizer's Step runs at its end (the last group)
};

// split_bytes > 0; a profile with no nodes, or forward and backward of different lengths, throws
// std::invalid_argument.
std::vector<NodeGroup> node_groups(const NodeMemoryProfile& profile, int64_t split_bytes);

// "F0-3 +12.0 MB | F4-6 +8.0 MB | B6-4 -9.0 MB | B3-0 -11.0 MB step": for --show-schedule and logs.
std::string describe_groups(const std::vector<NodeGroup>& groups);

}  // namespace wt

#include "plan/node_groups.hpp"

#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "sched/overlap_groups.hpp"

namespace wt {

namespace {

// A phase's groups: nodes in run order (forward: 0 up; backward: n-1 down), each group closing
// once its net allocation reaches split_bytes in size.
void cut_phase(const std::vector<NodePhaseMemory>& nodes, bool forward, int64_t split_bytes,
               std::vector<NodeGroup>& out) {
  const int n = static_cast<int>(nodes.size());
  std::vector<int64_t> net(nodes.size());
  for (int i = 0; i < n; ++i) net[size_t(i)] = nodes[size_t(forward ? i : n - 1 - i)].net;
  const std::vector<int> ends =
      cut_ranges(net, [&](const Cut& c) { return std::llabs(c.range_bytes) >= split_bytes; });
  int begin = 0;
  for (const int end : ends) {
    NodeGroup group;
    group.forward = forward;
    group.node_begin = forward ? begin : n - end;
    group.node_end = forward ? end : n - begin;
    int64_t in_use = 0;  // relative to the group's start
    for (int i = begin; i < end; ++i) {
      const NodePhaseMemory& node = nodes[size_t(forward ? i : n - 1 - i)];
      if (in_use + node.peak > group.peak) group.peak = in_use + node.peak;
      in_use += node.net;
    }
    group.net = in_use;
    out.push_back(group);
    begin = end;
  }
}

}  // namespace

std::vector<NodeGroup> node_groups(const NodeMemoryProfile& profile, int64_t split_bytes) {
  if (split_bytes <= 0) throw std::invalid_argument("node_groups: split_bytes must be > 0");
  if (profile.forward.empty() || profile.forward.size() != profile.backward.size())
    throw std::invalid_argument("node_groups: the profile needs each node's forward and backward");
  std::vector<NodeGroup> groups;
  cut_phase(profile.forward, true, split_bytes, groups);
  cut_phase(profile.backward, false, split_bytes, groups);
  groups.back().steps = true;
  return groups;
}

std::string describe_groups(const std::vector<NodeGroup>& groups) {
  std::string text;
  for (const NodeGroup& g : groups) {
    char line[96];
    std::snprintf(line, sizeof line, "%s%c%d-%d %+.1f MB%s", text.empty() ? "" : " | ",
                  g.forward ? 'F' : 'B', g.forward ? g.node_begin : g.node_end - 1,
                  g.forward ? g.node_end - 1 : g.node_begin, double(g.net) / 1e6,
                  g.steps ? " step" : "");
    text += line;
  }
  return text;
}

}  // namespace wt

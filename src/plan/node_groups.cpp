#include "plan/node_groups.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "sched/overlap_groups.hpp"

namespace wt {

namespace {

// A group of passes [begin, end): its net, and its peak above the bytes in use when it begins.
NodeGroup make_group(const std::vector<NodePhaseMemory>& passes, int begin, int end,
                     bool allocating) {
  NodeGroup group;
  group.pass_begin = begin;
  group.pass_end = end;
  group.allocating = allocating;
  int64_t in_use = 0;
  for (int i = begin; i < end; ++i) {
    group.peak = std::max(group.peak, in_use + passes[size_t(i)].peak);
    in_use += passes[size_t(i)].net;
  }
  group.net = in_use;
  return group;
}

// Passes [begin, end) (one phase) cut where a group's net reaches split_bytes in size; a pass whose
// own bytes (net or transient peak) reach the split closes the group before it and is one alone.
void cut_phase(const std::vector<NodePhaseMemory>& passes, int begin, int end, int64_t split_bytes,
               bool allocating, std::vector<NodeGroup>& out) {
  const int n = end - begin;
  std::vector<int64_t> net;
  for (int i = begin; i < end; ++i) net.push_back(passes[size_t(i)].net);
  auto over = [&](int i) {
    return i < n && std::max<int64_t>(std::llabs(net[size_t(i)]), passes[size_t(begin + i)].peak) >=
                        split_bytes;
  };
  const std::vector<int> ends = cut_ranges(net, [&](const Cut& c) {
    const int i = n - 1 - c.left;
    return over(i) || over(i + 1) || std::llabs(c.range_bytes) >= split_bytes;
  });
  int first = 0;
  for (const int last : ends) {
    out.push_back(make_group(passes, begin + first, begin + last, allocating));
    out.back().oversized = last - first == 1 && over(first);
    first = last;
  }
}

// The pass after which the step's bytes in use (transients included) are highest: the first such.
int peak_pass(const std::vector<NodePhaseMemory>& passes) {
  int64_t in_use = 0, best = INT64_MIN;
  int at = 0;
  for (size_t i = 0; i < passes.size(); ++i) {
    const int64_t reached = in_use + std::max<int64_t>(passes[i].peak, passes[i].net);
    if (reached > best) {
      best = reached;
      at = static_cast<int>(i);
    }
    in_use += passes[i].net;
  }
  return at;
}

}  // namespace

std::vector<NodePhaseMemory> step_passes(const NodeMemoryProfile& profile) {
  std::vector<NodePhaseMemory> passes(profile.forward);
  passes.insert(passes.end(), profile.backward.rbegin(), profile.backward.rend());
  return passes;
}

Partition partition_named(const std::string& name) {
  if (name == "split") return Partition::Split;
  if (name == "peak") return Partition::Peak;
  if (name == "turn") return Partition::Turn;
  throw std::invalid_argument("unknown node-group partition '" + name + "' (split, peak or turn)");
}

std::vector<NodeGroup> node_groups(const NodeMemoryProfile& profile, int64_t split_bytes,
                                   Partition partition) {
  if (split_bytes <= 0) throw std::invalid_argument("node_groups: split_bytes must be > 0");
  if (profile.forward.empty() || profile.forward.size() != profile.backward.size())
    throw std::invalid_argument("node_groups: the profile needs each node's forward and backward");
  const std::vector<NodePhaseMemory> passes = step_passes(profile);
  const int n = profile.nodes(), total = 2 * n;
  std::vector<NodeGroup> groups;
  if (partition == Partition::Split) {
    cut_phase(passes, 0, n, split_bytes, true, groups);
    cut_phase(passes, n, total, split_bytes, false, groups);
  } else {
    // Two groups: cut after the peak's pass (never after the last), or at the turn.
    const int cut = partition == Partition::Turn ? n : std::min(peak_pass(passes) + 1, total - 1);
    groups.push_back(make_group(passes, 0, cut, true));
    groups.push_back(make_group(passes, cut, total, false));
  }
  groups.back().steps = true;
  return groups;
}

std::string describe_group(const NodeGroup& g, int nodes) {
  std::string text;
  auto range = [&](char phase, int first_pass, int last_pass) {
    const int a = pass_node(first_pass, nodes), b = pass_node(last_pass, nodes);
    if (!text.empty()) text += ' ';
    text += phase + std::to_string(a) + (a == b ? "" : "-" + std::to_string(b));
  };
  if (g.pass_begin < nodes) range('F', g.pass_begin, std::min(g.pass_end, nodes) - 1);
  if (g.pass_end > nodes) range('B', std::max(g.pass_begin, nodes), g.pass_end - 1);
  char bytes[48];
  std::snprintf(bytes, sizeof bytes, " %+.1f MB%s%s", double(g.net) / 1e6, g.oversized ? "!" : "",
                g.steps ? " step" : "");
  return text + bytes;
}

std::string describe_groups(const std::vector<NodeGroup>& groups, int nodes) {
  std::string text;
  for (const NodeGroup& g : groups) text += (text.empty() ? "" : " | ") + describe_group(g, nodes);
  return text;
}

}  // namespace wt

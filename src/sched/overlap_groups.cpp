#include "sched/overlap_groups.hpp"

#include <algorithm>
#include <stdexcept>

namespace wt {

std::vector<int> cut_ranges(const std::vector<int64_t>& bytes,
                            const std::function<bool(const Cut&)>& close) {
  std::vector<int> ends;
  Cut cut;
  const int n = static_cast<int>(bytes.size());
  for (int i = 0; i < n; ++i) {
    cut.range_bytes += bytes[size_t(i)];
    cut.total_bytes += bytes[size_t(i)];
    cut.left = n - 1 - i;
    if (i == n - 1 || close(cut)) {
      ends.push_back(i + 1);
      ++cut.closed;
      cut.range_bytes = 0;
    }
  }
  return ends;
}

std::vector<OverlapGroup> overlap_groups(const std::vector<int64_t>& node_bytes, int first_node,
                                         int groups) {
  const int n = static_cast<int>(node_bytes.size());
  if (n == 0 || groups < 1) throw std::invalid_argument("overlap_groups: no nodes or no groups");
  const int k = std::min(groups, n);
  int64_t total = 0;
  for (int64_t b : node_bytes) total += b;
  // The backward, from the last node down, in k pieces freeing about equal bytes: piece g closes
  // once total / k * (g + 1) bytes are freed, or when only one node is left for each later piece.
  const std::vector<int64_t> reversed(node_bytes.rbegin(), node_bytes.rend());
  const std::vector<int> ends = cut_ranges(reversed, [&](const Cut& c) {
    const int later = k - 1 - c.closed;
    return later > 0 && (c.total_bytes >= total / k * (c.closed + 1) || c.left <= later);
  });

  std::vector<OverlapGroup> out(k);
  int front = 0;      // forward groups so far cover [0, front)
  int64_t freed = 0;  // bytes the backward groups so far free
  int64_t held = 0;   // bytes of nodes [0, front)
  for (int g = 0; g < k; ++g) {
    OverlapGroup& group = out[g];
    const int back_before = g == 0 ? 0 : ends[size_t(g - 1)];
    group.backward_end = first_node + n - back_before;
    group.backward_begin = first_node + n - ends[size_t(g)];
    for (int i = back_before; i < ends[size_t(g)]; ++i) freed += reversed[size_t(i)];
    group.forward_begin = first_node + front;
    if (g == k - 1) {
      front = n;
    } else {
      while (front < n && held + node_bytes[front] <= freed) held += node_bytes[front++];
    }
    group.forward_end = first_node + front;
  }
  return out;
}

}  // namespace wt

#include "sched/overlap_groups.hpp"

#include <algorithm>
#include <stdexcept>

namespace wt {

std::vector<OverlapGroup> overlap_groups(const std::vector<int64_t>& node_bytes, int first_node,
                                         int groups) {
  const int n = static_cast<int>(node_bytes.size());
  if (n == 0 || groups < 1) throw std::invalid_argument("overlap_groups: no nodes or no groups");
  const int k = std::min(groups, n);
  int64_t total = 0;
  for (int64_t b : node_bytes) total += b;

  std::vector<OverlapGroup> out(k);
  int back = n;       // backward groups so far cover [back, n)
  int front = 0;      // forward groups so far cover [0, front)
  int64_t freed = 0;  // bytes of nodes [back, n)
  int64_t held = 0;   // bytes of nodes [0, front)
  for (int g = 0; g < k; ++g) {
    OverlapGroup& group = out[g];
    group.backward_end = first_node + back;
    if (g == k - 1) {
      back = 0;
      freed = total;
    } else {
      // At least one node, and leave one for every later group.
      const int64_t target = total / k * (g + 1);
      do freed += node_bytes[--back];
      while (freed < target && back > k - 1 - g);
    }
    group.backward_begin = first_node + back;
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

#include "sched/gradient_buckets.hpp"

namespace wt {

std::vector<std::pair<int, int>> gradient_buckets(const StageInfo& stage, int64_t bucket_bytes) {
  std::vector<std::pair<int, int>> buckets;
  int end = stage.node_end;
  int64_t bytes = 0;
  for (int n = stage.node_end - 1; n >= stage.node_begin; --n) {
    bytes += stage.node_param_bytes[n - stage.node_begin];
    if (bytes >= bucket_bytes && n > stage.node_begin) {
      buckets.emplace_back(n, end);
      end = n;
      bytes = 0;
    }
  }
  buckets.emplace_back(stage.node_begin, end);
  return buckets;
}

}  // namespace wt

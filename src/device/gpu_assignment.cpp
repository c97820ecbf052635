#include "device/gpu_assignment.hpp"

#include <map>
#include <stdexcept>

namespace wt {

int gpu_for_local_rank(int local_rank, int visible) {
  if (visible <= 0) throw std::invalid_argument("gpu_for_local_rank: no visible GPU");
  return local_rank % visible;
}

GpuSharing find_sharing(const std::vector<std::string>& uuid_of_local_rank) {
  std::map<std::string, std::vector<int>> by_gpu;
  for (size_t r = 0; r < uuid_of_local_rank.size(); ++r)
    by_gpu[uuid_of_local_rank[r]].push_back(static_cast<int>(r));
  GpuSharing sharing;
  for (auto& [gpu, ranks] : by_gpu)
    if (ranks.size() > 1) sharing.groups.push_back({gpu, ranks});
  return sharing;
}

std::string describe_sharing(const GpuSharing& sharing, const std::string& node) {
  std::string text;
  for (const auto& group : sharing.groups) {
    if (!text.empty()) text += "; ";
    text += "node-local ranks";
    for (size_t i = 0; i < group.local_ranks.size(); ++i)
      text += (i == 0                              ? " "
               : i + 1 == group.local_ranks.size() ? " and "
                                                   : ", ") +
              std::to_string(group.local_ranks[i]);
    text += " share GPU " + group.gpu;
  }
  return text + " on node " + node;
}

}  // namespace wt

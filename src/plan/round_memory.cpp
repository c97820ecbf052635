#include "plan/round_memory.hpp"

#include <algorithm>
#include <stdexcept>

namespace wt {

RoundMemory round_memory(const std::vector<JobBytes>& jobs, const ColocatePairing& pairing) {
  RoundMemory out;
  int64_t in_use = 0;
  for (const JobBytes& job : jobs) in_use += job.resident;
  for (int k = 0; k < pairing.pairs(); ++k) {
    int64_t peak = in_use, net = 0;
    for (const PairSlot& slot : {pairing.av[size_t(k)], pairing.dv[size_t(k)]}) {
      if (slot.hole()) continue;
      if (size_t(slot.job) >= jobs.size() ||
          size_t(slot.group) >= jobs[size_t(slot.job)].groups.size())
        throw std::invalid_argument("round_memory: the pairing names a group the jobs lack");
      const GroupBytes& g = jobs[size_t(slot.job)].groups[size_t(slot.group)];
      peak += std::max<int64_t>(0, g.peak);
      net += g.net;
    }
    out.pair_peak.push_back(peak);
    if (peak > out.peak || out.peak_pair < 0) {
      out.peak = peak;
      out.peak_pair = k;
    }
    in_use += net;
  }
  return out;
}

int64_t one_at_a_time_peak(const std::vector<JobBytes>& jobs, const std::vector<int>& order,
                           const std::vector<int>& next, int64_t in_use) {
  int64_t peak = in_use;
  for (const int j : order) {
    const std::vector<GroupBytes>& groups = jobs[size_t(j)].groups;
    for (size_t g = size_t(next[size_t(j)]); g < groups.size(); ++g) {
      peak = std::max(peak, in_use + std::max<int64_t>(0, groups[g].peak));
      in_use += groups[g].net;
    }
  }
  return peak;
}

int64_t one_at_a_time_peak(const std::vector<JobBytes>& jobs, const std::vector<int>& order) {
  int64_t in_use = 0;
  for (const JobBytes& job : jobs) in_use += job.resident;
  return one_at_a_time_peak(jobs, order, std::vector<int>(jobs.size(), 0), in_use);
}

}  // namespace wt

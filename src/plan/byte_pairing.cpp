#include "plan/byte_pairing.hpp"

#include <algorithm>
#include <stdexcept>

namespace wt {

namespace {

// The first job in `order` after position `from` with groups left, or -1.
int next_job(const std::vector<JobBytes>& jobs, const std::vector<int>& order,
             const std::vector<int>& next, size_t from) {
  for (size_t q = from; q < order.size(); ++q)
    if (size_t(next[size_t(order[q])]) < jobs[size_t(order[q])].groups.size()) return int(q);
  return -1;
}

}  // namespace

ColocatePairing pair_by_bytes(const std::vector<JobBytes>& jobs, int64_t target) {
  std::vector<int> counts;
  for (const JobBytes& job : jobs) {
    if (job.groups.empty()) throw std::invalid_argument("pair_by_bytes: a job has no groups");
    counts.push_back(static_cast<int>(job.groups.size()));
  }
  ColocatePairing out;
  out.job_order = jobs_by_group_count(counts);
  if (target <= 0) target = one_at_a_time_peak(jobs, out.job_order);
  std::vector<int> next(jobs.size(), 0);
  int64_t in_use = 0;
  for (const JobBytes& job : jobs) in_use += job.resident;
  for (int lead_at = next_job(jobs, out.job_order, next, 0); lead_at >= 0;
       lead_at = next_job(jobs, out.job_order, next, 0)) {
    const int lead = out.job_order[size_t(lead_at)];
    const int partner_at = next_job(jobs, out.job_order, next, size_t(lead_at) + 1);
    const int partner = partner_at < 0 ? -1 : out.job_order[size_t(partner_at)];
    const GroupBytes& a = jobs[size_t(lead)].groups[size_t(next[size_t(lead)])];
    bool together = false;
    if (partner >= 0) {
      const GroupBytes& b = jobs[size_t(partner)].groups[size_t(next[size_t(partner)])];
      if (in_use + std::max<int64_t>(0, a.peak) + std::max<int64_t>(0, b.peak) <= target) {
        std::vector<int> after = next;
        ++after[size_t(lead)];
        ++after[size_t(partner)];
        together = one_at_a_time_peak(jobs, out.job_order, after, in_use + a.net + b.net) <= target;
      }
    }
    PairSlot lead_slot{lead, next[size_t(lead)]++}, other{};
    in_use += a.net;
    if (together) {
      other = PairSlot{partner, next[size_t(partner)]};
      in_use += jobs[size_t(partner)].groups[size_t(next[size_t(partner)]++)].net;
    }
    const bool lead_on_av = a.allocating;
    out.av.push_back(lead_on_av ? lead_slot : other);
    out.dv.push_back(lead_on_av ? other : lead_slot);
  }
  return out;
}

double paired_fraction(const ColocatePairing& pairing) {
  int placed = 0, paired = 0;
  for (int k = 0; k < pairing.pairs(); ++k) {
    const bool both = !pairing.av[size_t(k)].hole() && !pairing.dv[size_t(k)].hole();
    placed += !pairing.av[size_t(k)].hole() + !pairing.dv[size_t(k)].hole();
    paired += both ? 2 : 0;
  }
  return placed > 0 ? double(paired) / placed : 0;
}

}  // namespace wt

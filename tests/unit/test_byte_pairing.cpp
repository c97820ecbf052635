// Co-located jobs' node groups paired by bytes (plan/byte_pairing.hpp), counted by the round's
// memory rules (plan/round_memory.hpp): the rules' arithmetic; two copies of a front-heavy CNN,
// whose groups Algorithm 1 pairs by index into a round above the jobs' one-at-a-time peak, paired
// by bytes within it; a budget with headroom lets the second job start beside the first's ANGs;
// and on random jobs, every group once and in order, never above the target, never two groups of
// one job in a pair.
#include <gtest/gtest.h>

#include "plan/byte_pairing.hpp"
#include "plan/colocate_pairing.hpp"
#include "plan/round_memory.hpp"
#include "tensor/rng.hpp"

namespace {

using wt::GroupBytes;
using wt::JobBytes;

// A job whose forward keeps `kept[i]` in group i and whose backward frees them in reverse.
JobBytes chain_job(const std::vector<int64_t>& kept, int64_t resident) {
  JobBytes job;
  job.resident = resident;
  for (int64_t bytes : kept) job.groups.push_back({bytes, bytes, true});
  for (auto it = kept.rbegin(); it != kept.rend(); ++it) job.groups.push_back({-*it, 0, false});
  return job;
}

// Algorithm 1's shape of the same jobs (every ANG split-sized).
std::vector<wt::ColocatedJobGroups> shapes(const std::vector<JobBytes>& jobs) {
  std::vector<wt::ColocatedJobGroups> out;
  for (const JobBytes& job : jobs) {
    wt::ColocatedJobGroups shape;
    shape.total = int(job.groups.size());
    for (const GroupBytes& g : job.groups) shape.allocating += g.allocating;
    out.push_back(shape);
  }
  return out;
}

int pairs_with_two(const wt::ColocatePairing& p) {
  int n = 0;
  for (int k = 0; k < p.pairs(); ++k) n += !p.av[size_t(k)].hole() && !p.dv[size_t(k)].hole();
  return n;
}

TEST(RoundMemory, APairPeaksAtItsStartPlusEachGroupsOwnPeak) {
  // J1: +50 then -50 (a 5-byte transient); J2 the same; 10 resident each.
  const std::vector<JobBytes> jobs{{10, {{50, 50, true}, {-50, 5, false}}},
                                   {10, {{50, 50, true}, {-50, 5, false}}}};
  wt::ColocatePairing p;
  p.av = {{0, 0}, {1, 0}, {}};
  p.dv = {{}, {0, 1}, {1, 1}};
  const wt::RoundMemory m = wt::round_memory(jobs, p);
  // Pair 2: J1's 50 still counts though its group frees them beside J2's (another stream's frees
  // wait for the boundary): 70 + 50 + 5.
  EXPECT_EQ(m.pair_peak, (std::vector<int64_t>{70, 125, 75}));
  EXPECT_EQ(m.peak, 125);
  EXPECT_EQ(m.peak_pair, 1);
  EXPECT_EQ(wt::one_at_a_time_peak(jobs, {0, 1}), 75);  // 20 + 50 + 5, each job alone
  p.dv[1] = {0, 5};
  EXPECT_THROW(wt::round_memory(jobs, p), std::invalid_argument);
}

TEST(BytePairing, FrontHeavyCnnStaysWithinTheOneAtATimePeakWhereIndexPairingDoesNot) {
  // lenet's shape (bench/README.md): the first layers keep the most, the backward frees them last.
  const std::vector<JobBytes> jobs{chain_job({52, 50, 38, 25, 7}, 8),
                                   chain_job({52, 50, 38, 25, 7}, 8)};
  const int64_t alone = wt::one_at_a_time_peak(jobs, {0, 1});
  EXPECT_EQ(alone, 16 + 172);
  // Algorithm 1 (no budget room: p = 0) pairs J2's first ANGs beside J1's last-layer DNGs.
  const wt::ColocatePairing index = wt::pair_node_groups(shapes(jobs), alone, 1);
  const int64_t index_peak = wt::round_memory(jobs, index).peak;
  EXPECT_GT(index_peak, alone) << wt::describe_stream(index.av) << " / "
                               << wt::describe_stream(index.dv);
  // By bytes, under that same target: within it, and still some pairs.
  const wt::ColocatePairing bytes = wt::pair_by_bytes(jobs, alone);
  EXPECT_LE(wt::round_memory(jobs, bytes).peak, alone)
      << wt::describe_stream(bytes.av) << " / " << wt::describe_stream(bytes.dv);
  EXPECT_EQ(wt::job_out_of_order(bytes, 2), -1);
  // J2's first group (52) starts beside J1's fourth DNG (-50): the pairs before freed 7 + 25 + 38
  // = 70 >= 52. Beside the third (-38) it would not fit: only 32 freed before it, and the -38 in
  // the same pair is another stream's until the boundary.
  EXPECT_EQ(wt::describe_stream(bytes.av),
            "J1NG1 J1NG2 J1NG3 J1NG4 J1NG5 - - - J2NG1 J2NG2 J2NG3 J2NG4 J2NG5 - - - - -");
  EXPECT_EQ(wt::describe_stream(bytes.dv),
            "- - - - - J1NG6 J1NG7 J1NG8 J1NG9 J1NG10 - - - J2NG6 J2NG7 J2NG8 J2NG9 J2NG10");
  EXPECT_GT(pairs_with_two(bytes), 0);
  // No budget at all (target 0): the same as the one-at-a-time peak.
  EXPECT_LE(wt::round_memory(jobs, wt::pair_by_bytes(jobs, 0)).peak, alone);
}

TEST(BytePairing, BudgetHeadroomStartsTheSecondJobBesideTheFirstsAngs) {
  const std::vector<JobBytes> jobs{chain_job({10, 10, 10}, 5), chain_job({10, 10, 10}, 5)};
  // Room for both jobs' activations at once: every group runs beside the other job's (lockstep).
  const wt::ColocatePairing roomy = wt::pair_by_bytes(jobs, 1000);
  EXPECT_EQ(roomy.pairs(), 6);
  EXPECT_EQ(pairs_with_two(roomy), 6);
  EXPECT_DOUBLE_EQ(wt::paired_fraction(roomy), 1.0);
  // Room for one job's activations and 10 more: J2's first ANG runs beside J1's first (p = 1, in
  // bytes), its second only once J1's backward has begun to free, and the round stays within the
  // budget.
  const int64_t budget = 10 + 30 + 10;
  const wt::ColocatePairing tight = wt::pair_by_bytes(jobs, budget);
  EXPECT_LE(wt::round_memory(jobs, tight).peak, budget);
  EXPECT_EQ(wt::describe_stream(tight.dv).substr(0, 11), "J2NG1 - - J");
  EXPECT_EQ(wt::job_out_of_order(tight, 2), -1);
}

TEST(BytePairing, EveryGroupOnceInOrderWithinTheTargetOnRandomJobs) {
  wt::Rng rng(34);
  for (int trial = 0; trial < 2000; ++trial) {
    const int k = 1 + int(rng.below(4));
    std::vector<JobBytes> jobs;
    std::vector<int> order;
    size_t groups = 0;
    for (int j = 0; j < k; ++j) {
      JobBytes job;
      job.resident = int64_t(rng.below(50));
      int64_t held = 0;
      const int angs = 1 + int(rng.below(6)), dngs = 1 + int(rng.below(6));
      for (int g = 0; g < angs; ++g) {
        const int64_t net = int64_t(rng.below(100));
        job.groups.push_back({net, net + int64_t(rng.below(20)), true});
        held += net;
      }
      for (int g = 0; g < dngs; ++g) {
        const int64_t net = g + 1 == dngs ? -held : -int64_t(rng.below(uint64_t(held) + 1));
        job.groups.push_back({net, int64_t(rng.below(20)), false});
        held += net;
      }
      groups += job.groups.size();
      jobs.push_back(job);
      order.push_back(j);
    }
    std::vector<int> counts;
    for (const JobBytes& job : jobs) counts.push_back(int(job.groups.size()));
    const int64_t alone = wt::one_at_a_time_peak(jobs, wt::jobs_by_group_count(counts));
    const int64_t target = rng.below(2) ? 0 : alone + int64_t(rng.below(300));
    const wt::ColocatePairing p = wt::pair_by_bytes(jobs, target);
    ASSERT_EQ(wt::job_out_of_order(p, k), -1) << "trial " << trial;
    size_t placed = 0;
    for (int s = 0; s < p.pairs(); ++s) {
      const wt::PairSlot a = p.av[size_t(s)], b = p.dv[size_t(s)];
      placed += !a.hole() + !b.hole();
      ASSERT_FALSE(!a.hole() && !b.hole() && a.job == b.job) << "trial " << trial;
    }
    ASSERT_EQ(placed, groups) << "trial " << trial;
    ASSERT_LE(wt::round_memory(jobs, p).peak, target > 0 ? target : alone) << "trial " << trial;
  }
}

TEST(BytePairing, RefusesAJobWithoutGroups) {
  EXPECT_THROW(wt::pair_by_bytes({JobBytes{}}, 100), std::invalid_argument);
}

}  // namespace

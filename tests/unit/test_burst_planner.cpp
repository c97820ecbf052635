// DeepPool's planner (plan/burst_planner.hpp) on cost tables built by hand, with the tables and
// plans worked out by hand in the comments, and against brute force over every plan.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

#include "plan/burst_planner.hpp"

namespace {

using wt::BurstCosts;
using wt::BurstOptions;
using wt::BurstPlan;

constexpr double kNoLimit = 1e30;

std::vector<int> counts_of(const BurstPlan& p) {
  std::vector<int> c;
  for (const auto& u : p.units) c.push_back(u.count);
  return c;
}

// counts {1, 2, 4}; comm the same for every transition.
BurstCosts table(std::vector<std::vector<double>> comp, std::vector<std::vector<double>> sync,
                 double comm) {
  BurstCosts c;
  c.counts = {1, 2, 4};
  c.comp = std::move(comp);
  c.sync = std::move(sync);
  c.comm.assign(c.comp.size(), std::vector<std::vector<double>>(3, std::vector<double>(3, comm)));
  return c;
}

// Free transitions. Unit totals (comp + sync) at 1, 2, 4 ranks: {4, 2.5, 1.5}, {1, 1.4, 1.9},
// {2, 1.1, 0.7}. Amplifications (T * g / single): unit 0 {1, 1.25, 1.5}, unit 1 {1, 2.8, 7.6}.
BurstCosts three_units() {
  return table({{4, 2, 1}, {1, 0.9, 0.9}, {2, 1, 0.5}},
               {{0, 0.5, 0.5}, {0, 0.5, 1.0}, {0, 0.1, 0.2}}, 0.0);
}

TEST(BurstPlanner, WithoutALimitEachUnitTakesItsFastestCount) {
  BurstOptions o;
  o.amp_limit = kNoLimit;
  o.amp_exempt_s = 0;
  const BurstPlan p = wt::plan_burst(three_units(), o);
  // S[0] = {4, 2.5, 1.5}; unit 1 from S[0][4] = 1.5: {2.5, 2.9, 3.4}; unit 2 from S[1][1] = 2.5:
  // {4.5, 3.6, 3.2}.
  EXPECT_EQ(counts_of(p), (std::vector<int>{4, 1, 4}));
  EXPECT_DOUBLE_EQ(p.step_s, 3.2);
  EXPECT_DOUBLE_EQ(p.units[1].cumulative_s, 2.5);
  // GPU-seconds 4 * 1.5 + 1 * 1 + 4 * 0.7; rank 0 is never idle, ranks 1-3 idle in unit 1.
  EXPECT_DOUBLE_EQ(p.gpu_seconds, 6 + 1 + 2.8);
  ASSERT_EQ(p.idle_s.size(), 4u);
  for (size_t r = 0; r < 4; ++r) EXPECT_NEAR(p.idle_s[r], r == 0 ? 0.0 : 1.0, 1e-12) << r;
  ASSERT_EQ(p.segments().size(), 3u);
  EXPECT_EQ(p.segments()[1].count, 1);
}

TEST(BurstPlanner, TheLimitChangesThePlanButNotTheLastUnit) {
  BurstOptions o;
  o.amp_limit = 1.2;
  o.amp_exempt_s = 0;
  const BurstPlan p = wt::plan_burst(three_units(), o);
  // Unit 1 may follow unit 0 on 1 rank only (amplifications 1.25 and 1.5 exceed 1.2, and neither
  // is below the 1 already admitted): S[1] = 4 + {1, 1.4, 1.9}. Unit 2 follows unit 1 on 1 rank
  // (2.8 and 7.6 are over): S[2] = 5 + {2, 1.1, 0.7}. Unit 2 itself runs on 4 ranks at
  // amplification 0.7 * 4 / 2 = 1.4 > 1.2: the last unit is never checked.
  EXPECT_EQ(counts_of(p), (std::vector<int>{1, 1, 4}));
  EXPECT_DOUBLE_EQ(p.step_s, 5.7);
  EXPECT_DOUBLE_EQ(p.units[2].amplification, 1.4);
}

TEST(BurstPlanner, TheLimitIsSoftWhenEveryPredecessorIsOverIt) {
  // Unit 0 scales perfectly (comp {4, 2, 1}: amplification 1 everywhere). Every transition costs
  // 1, so unit 1 (comp {2, 1, 0.5}) has T = {3, 2, 1.5} and amplifications {1.5, 2, 3}: all over
  // the limit 1. Unit 2 (comp 1 everywhere) admits h = 1 first (nothing admitted yet), then
  // rejects h = 2 and h = 4 (2 and 3 exceed max(1.5, 1)): the least amplified, not the fastest.
  BurstCosts c = table({{4, 2, 1}, {2, 1, 0.5}, {1, 1, 1}}, {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}}, 1.0);
  for (auto& row : c.comm[2])
    for (double& v : row) v = 0;
  BurstOptions o;
  o.amp_limit = 1.0;
  o.amp_exempt_s = 0;
  BurstPlan p = wt::plan_burst(c, o);
  // S[1] = min_h S[0][h] + 1 = 2, + comp: {4, 3, 2.5}; S[2] from h = 1: 4 + 1 = 5 for every g,
  // the first minimum (g = 1) chosen.
  EXPECT_EQ(counts_of(p), (std::vector<int>{4, 1, 1}));
  EXPECT_DOUBLE_EQ(p.step_s, 5.0);
  EXPECT_DOUBLE_EQ(p.units[1].amplification, 1.5);
  o.amp_limit = kNoLimit;  // unlimited, unit 2 follows unit 1 on 4 ranks: 2.5 + 1
  p = wt::plan_burst(c, o);
  EXPECT_EQ(counts_of(p), (std::vector<int>{4, 4, 1}));
  EXPECT_DOUBLE_EQ(p.step_s, 3.5);
}

TEST(BurstPlanner, ExemptUnitsAreNeverLimited) {
  BurstOptions o;
  o.amp_limit = 1.2;
  o.amp_exempt_s = 5.0;  // every unit's single-rank time (4, 1, 2) is under it
  const BurstPlan p = wt::plan_burst(three_units(), o);
  EXPECT_EQ(counts_of(p), (std::vector<int>{4, 1, 4})) << "the unlimited plan";
  for (const auto& u : p.units) EXPECT_EQ(u.amplification, 1.0);
}

TEST(BurstPlanner, EqualCommunicationAndScalingComputeGiveTheAllRanksPlan) {
  // comp halves with every doubling, sync is small, every transition costs the same: each unit
  // runs on all 4 ranks, which is data parallelism.
  BurstCosts c = table({{8, 4, 2}, {6, 3, 1.5}, {2, 1, 0.5}, {4, 2, 1}},
                       {{0, .1, .2}, {0, .1, .2}, {0, .1, .2}, {0, .1, .2}}, 0.3);
  BurstOptions o;
  const BurstPlan p = wt::plan_burst(c, o);
  EXPECT_EQ(counts_of(p), (std::vector<int>{4, 4, 4, 4}));
  ASSERT_EQ(p.segments().size(), 1u);
  EXPECT_EQ(p.segments()[0].count, 4);
  ASSERT_EQ(p.idle_s.size(), 4u);
  for (double idle : p.idle_s) EXPECT_NEAR(idle, 0.0, 1e-12);
}

TEST(BurstPlanner, PricesAForcedPlanAsItPricesItsOwn) {
  BurstOptions o;
  o.amp_limit = 1.2;
  o.amp_exempt_s = 0;
  const BurstPlan planned = wt::plan_burst(three_units(), o);
  const BurstPlan same = wt::price_burst_plan(three_units(), o, counts_of(planned));
  EXPECT_EQ(counts_of(same), counts_of(planned));
  EXPECT_DOUBLE_EQ(same.step_s, planned.step_s);
  for (size_t u = 0; u < same.units.size(); ++u)
    EXPECT_DOUBLE_EQ(same.units[u].amplification, planned.units[u].amplification) << u;
  // Everything on 2 ranks: 2.5 + 1.4 + 1.1, no transfers (the same count throughout).
  const BurstPlan two = wt::price_burst_plan(three_units(), o, {2, 2, 2});
  EXPECT_DOUBLE_EQ(two.step_s, 5.0);
  EXPECT_THROW(wt::price_burst_plan(three_units(), o, {2, 2}), std::invalid_argument);
  EXPECT_THROW(wt::price_burst_plan(three_units(), o, {2, 3, 2}), std::invalid_argument);
}

TEST(BurstPlanner, RejectsAnInconsistentTable) {
  BurstCosts c = three_units();
  c.sync.pop_back();
  EXPECT_THROW(wt::plan_burst(c, BurstOptions{}), std::invalid_argument);
  c = three_units();
  c.counts = {1, 4, 2};
  EXPECT_THROW(wt::plan_burst(c, BurstOptions{}), std::invalid_argument);
}

// Brute force: every plan (3^L of them) whose units but the last are within the limit.
double brute_force(const BurstCosts& c, double limit, double exempt) {
  const int L = c.units();
  double best = 1e300;
  std::vector<size_t> k(size_t(L), 0);
  std::function<void(int, double)> walk = [&](int u, double t) {
    if (u == L) {
      best = std::min(best, t);
      return;
    }
    for (size_t g = 0; g < c.counts.size(); ++g) {
      const double unit_t = (u == 0 ? 0.0 : c.comm[size_t(u)][k[size_t(u - 1)]][g]) +
                            c.comp[size_t(u)][g] + c.sync[size_t(u)][g];
      const double single = c.comp[size_t(u)][0] + c.sync[size_t(u)][0];
      const double amp = single <= exempt ? 1.0 : unit_t * c.counts[g] / single;
      if (u < L - 1 && amp > limit) continue;  // the last unit is never checked
      k[size_t(u)] = g;
      walk(u + 1, t + unit_t);
    }
  };
  walk(0, 0.0);
  return best;
}

BurstCosts random_table(std::mt19937_64& rng, int units, bool free_transitions) {
  std::uniform_real_distribution<double> d(0.1, 4.0);
  BurstCosts c;
  c.counts = {1, 2, 4};
  for (int u = 0; u < units; ++u) {
    c.comp.push_back({d(rng), d(rng), d(rng)});
    c.sync.push_back({0, d(rng) / 4, d(rng) / 4});
    std::vector<std::vector<double>> comm(3, std::vector<double>(3, 0.0));
    if (!free_transitions)
      for (auto& row : comm)
        for (double& v : row) v = d(rng) / 2;
    c.comm.push_back(comm);
  }
  return c;
}

// Without a limit the program must find the fastest of all plans. With a limit the rule depends
// on the path (an amplification includes the transition into the unit), except when transitions
// are free: then a unit's amplification is its own, on 1 rank it is 1 (always admitted first),
// and the soft rule admits exactly the predecessors within the limit, so the program must find
// the fastest plan whose units but the last are within it.
TEST(BurstPlanner, EqualsBruteForceOverEveryPlan) {
  std::mt19937_64 rng(11);
  int binding = 0;  // trials where the limit made the best plan slower
  for (int trial = 0; trial < 300; ++trial) {
    const int units = 1 + trial % 6;
    BurstOptions o;
    o.amp_exempt_s = (trial % 5 == 0) ? 1.0 : 0.0;
    BurstCosts c = random_table(rng, units, false);
    o.amp_limit = kNoLimit;
    EXPECT_NEAR(wt::plan_burst(c, o).step_s, brute_force(c, kNoLimit, o.amp_exempt_s), 1e-9)
        << "trial " << trial;
    c = random_table(rng, units, true);
    o.amp_limit = 1.0 + double(trial % 7) / 3.0;
    const double limited = brute_force(c, o.amp_limit, o.amp_exempt_s);
    EXPECT_NEAR(wt::plan_burst(c, o).step_s, limited, 1e-9)
        << "trial " << trial << " limit " << o.amp_limit;
    binding += limited > brute_force(c, kNoLimit, o.amp_exempt_s) + 1e-9;
  }
  EXPECT_GT(binding, 30) << "the limit should change the best plan in many trials";
}

}  // namespace

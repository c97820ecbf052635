// The burst planner's pricing refinements (plan/burst_planner.hpp, pricing/burst_costs.hpp): the
// amplification test per layer, sync priced per segment along the path, DeepPool's code's
// admission rule, and the deeppool cost model's terms. Figures worked out by hand in comments.
#include <gtest/gtest.h>

#include "plan/burst_planner.hpp"
#include "pricing/burst_costs.hpp"
#include "pricing/device_model.hpp"
#include "pricing/gradient_sync.hpp"

namespace {

using wt::BurstCosts;
using wt::BurstOptions;

std::vector<int> counts_of(const wt::BurstPlan& p) {
  std::vector<int> c;
  for (const auto& u : p.units) c.push_back(u.count);
  return c;
}

// counts {1, 2}; every transition between different counts costs `comm`.
BurstCosts two_counts(std::vector<std::vector<double>> comp, double comm) {
  BurstCosts c;
  c.counts = {1, 2};
  c.comp = std::move(comp);
  c.sync.assign(c.comp.size(), {0.0, 0.0});
  c.comm.assign(c.comp.size(), {{0.0, comm}, {comm, 0.0}});
  return c;
}

TEST(BurstPricing, AmplificationIsTestedPerLayer) {
  // Unit 0: two layers of 0.2 ms on one rank, 0.15 ms each on two. As one unit it takes 0.4 ms
  // (over the 0.3 ms exemption) and 0.3 ms on two ranks: amplification 0.3 * 2 / 0.4 = 1.5 > 1.2,
  // so unit 1 keeps unit 0 on one rank (step 0.4 + 1). Per layer both are exempt: unit 0 goes to
  // two ranks (step 0.3 + 1).
  BurstCosts c = two_counts({{0.4e-3, 0.3e-3}, {1e-3, 1e-3}}, 0.0);
  BurstOptions o;
  o.amp_limit = 1.2;
  wt::BurstPlan p = wt::plan_burst(c, o);
  EXPECT_EQ(counts_of(p), (std::vector<int>{1, 1}));
  EXPECT_NEAR(p.step_s, 1.4e-3, 1e-12);
  c.layer_own = {{{0.2e-3, 0.15e-3}, {0.2e-3, 0.15e-3}}, {{1e-3, 1e-3}}};
  p = wt::plan_burst(c, o);
  EXPECT_EQ(counts_of(p), (std::vector<int>{2, 1}));
  EXPECT_NEAR(p.step_s, 1.3e-3, 1e-12);
  EXPECT_EQ(p.units[0].amplification, 1.0);
}

TEST(BurstPricing, AUnitIsAsAmplifiedAsItsWorstLayer) {
  // Layer a: 1 ms on one rank, 0.9 on two (amplification 1.8); layer b: 0.1 ms, exempt. The unit
  // as a whole would be (0.9 + 0.05) * 2 / 1.1 = 1.727; per layer it is 1.8.
  BurstCosts c = two_counts({{1.1e-3, 0.95e-3}}, 0.0);
  c.layer_own = {{{1e-3, 0.9e-3}, {0.1e-3, 0.05e-3}}};
  const wt::BurstPlan p = wt::price_burst_plan(c, BurstOptions{}, {2});
  EXPECT_NEAR(p.units[0].amplification, 1.8, 1e-12);
}

TEST(BurstPricing, SegmentSyncIsPaidOncePerSegment) {
  // A segment's sync on two ranks: 0.5 (its latency chain) + 0.1 per unit. Both units on two
  // ranks: unit 0 pays 0.6, unit 1 adds 0.1, step 1 + 0.6 + 1 + 0.1 = 2.7. Priced per unit, each
  // would pay 0.6 and all-on-one-rank (4) or a switch (3.9) would be as good as 3.2.
  BurstCosts c = two_counts({{2, 1}, {2, 1}}, 0.3);
  c.segment_sync = [&](int begin, int end, size_t k) {
    return c.counts[k] > 1 ? 0.5 + 0.1 * (end - begin) : 0.0;
  };
  BurstOptions o;
  o.amp_limit = 99;
  const wt::BurstPlan p = wt::plan_burst(c, o);
  EXPECT_EQ(counts_of(p), (std::vector<int>{2, 2}));
  EXPECT_NEAR(p.step_s, 2.7, 1e-12);
  EXPECT_NEAR(p.units[0].sync_s, 0.6, 1e-12);
  EXPECT_NEAR(p.units[1].sync_s, 0.1, 1e-12);
  EXPECT_NEAR(wt::price_burst_plan(c, o, {2, 1}).step_s, 1 + 0.6 + 0.3 + 2, 1e-12);
  EXPECT_NEAR(wt::price_burst_plan(c, o, {1, 2}).step_s, 2 + 0.3 + 1 + 0.6, 1e-12);
}

TEST(BurstPricing, DeepPoolsCodeKeepsTheFirstOfEqualPredecessors) {
  // Unit 0 finishes at 1 on one rank and 0.5 on two; reaching unit 1 on one rank costs 0 from one
  // rank and 0.5 from two: both predecessors give 1. The paper's rule (<=) takes the later one
  // (two ranks), DeepPool's code (strict <) the first. Unit 1 on two ranks is slow (5). With
  // equal candidates this is the only place the rules differ: a newest bestAmp and a minimum one
  // admit the same predecessors, since the newest can only exceed the minimum within the limit.
  BurstCosts c = two_counts({{1, 0.5}, {1, 5}}, 0.5);
  BurstOptions o;
  EXPECT_EQ(counts_of(wt::plan_burst(c, o)), (std::vector<int>{2, 1}));
  o.admission = BurstOptions::Admission::DeepPoolCode;
  EXPECT_EQ(counts_of(wt::plan_burst(c, o)), (std::vector<int>{1, 1}));
  EXPECT_NEAR(wt::plan_burst(c, o).step_s, 2.0, 1e-12);
}

struct Vgg16 {
  wt::Graph graph = wt::Graph::load(WT_SOURCE_DIR "/models/vgg16_sim.toml");
  wt::CostModel costs{graph, {}, wt::load_device_model("a100"), nullptr, 1};
  std::vector<wt::PlanningUnit> units = wt::burst_units(graph);
  size_t unit(const std::string& first) const {
    size_t u = 0;
    while (units[u].name.rfind(first, 0) != 0) ++u;
    return u;
  }
};

TEST(BurstPricing, UnitsListTheirLayersAsDeepPoolPlansThem) {
  Vgg16 m;
  // conv1_1..relu1_1: two layers; fc6..drop6: fc6 and relu6 (dropout joins it); fc8..loss: one.
  EXPECT_EQ(m.units[0].layers.size(), 2u);
  const auto& fc6 = m.units[m.unit("fc6")].layers;
  ASSERT_EQ(fc6.size(), 2u);
  EXPECT_EQ(fc6[1].second - fc6[1].first, 2);
  EXPECT_EQ(m.units.back().layers.size(), 1u);
}

TEST(BurstPricing, DeepPoolModelSyncsWithoutLatency) {
  Vgg16 m;
  wt::BurstCostOptions o;
  o.model = "deeppool";
  o.graph = &m.graph;
  const wt::BurstCosts t = wt::burst_cost_table(m.costs, m.units, {1, 2, 8}, 32, o);
  EXPECT_FALSE(t.segment_sync);
  EXPECT_EQ(t.optimizer_step_s, 0.0);  // DeepPool prices no optimizer step
  const double beta = 230e9;           // the a100's link
  // fc6: 25088 x 4096 + 4096 parameters, bytes / beta on any split, nothing on one rank.
  const size_t fc6 = m.unit("fc6");
  EXPECT_EQ(t.sync[fc6][0], 0.0);
  EXPECT_NEAR(t.sync[fc6][1], 102764544.0 * 4 / beta, 1e-12);
  EXPECT_NEAR(t.sync[fc6][2], 102764544.0 * 4 / beta, 1e-12);
  // conv1_1: DeepPool counts k*k*H_out + k*k = 9 * 224 + 9 parameters, on one rank too.
  EXPECT_NEAR(t.sync[0][0], 2025.0 * 4 / beta, 1e-15);
  EXPECT_NEAR(t.sync[0][2], 2025.0 * 4 / beta, 1e-15);
  // The per-layer times carry the same sync: conv1_1's layer, not relu1_1's.
  EXPECT_NEAR(
      t.layer_own[0][0][2] - (m.costs.forward_s(0, 0, 1, 4) + m.costs.backward_s(0, 0, 1, 4)),
      2025.0 * 4 / beta, 1e-15);
  o.graph = nullptr;
  EXPECT_THROW(wt::burst_cost_table(m.costs, m.units, {1, 2, 8}, 32, o), std::invalid_argument);
}

TEST(BurstPricing, ExecutorModelSyncsAsTheExecutorRuns) {
  Vgg16 m;
  wt::BurstCostOptions o;
  o.bucket_bytes = 25 << 20;
  const wt::BurstCosts t = wt::burst_cost_table(m.costs, m.units, {1, 2, 8}, 32, o);
  ASSERT_TRUE(t.segment_sync);
  EXPECT_DOUBLE_EQ(t.optimizer_step_s, m.costs.step_s(0));  // reported beside every plan
  const size_t fc6 = m.unit("fc6");
  const int begin = m.units[fc6].node_begin, end = m.units[fc6].node_end;
  const wt::SegmentSync alone =
      wt::segment_sync(m.costs, 0, begin, end, 4, {0, 1, 2, 3, 4, 5, 6, 7}, 25 << 20);
  EXPECT_EQ(alone.buckets, 1);  // a node's gradient is never split: fc6 is one bucket
  EXPECT_DOUBLE_EQ(t.sync[fc6][2], alone.exposed_s);
  EXPECT_DOUBLE_EQ(t.segment_sync(int(fc6), int(fc6) + 1, 2), alone.exposed_s);
  // Two units as one segment share buckets and overlap: less than apart.
  EXPECT_LT(
      t.segment_sync(int(fc6), int(fc6) + 2, 2),
      t.segment_sync(int(fc6), int(fc6) + 1, 2) + t.segment_sync(int(fc6) + 1, int(fc6) + 2, 2));
  o.model = "paper";
  EXPECT_THROW(wt::burst_cost_table(m.costs, m.units, {1, 2, 8}, 32, o), std::invalid_argument);
}

}  // namespace

// From a model to the burst planner's inputs (pricing/planning_units.hpp, pricing/burst_costs.hpp):
// planning units (followers fused, residual blocks whole), candidate counts, and the cost table's
// terms.
#include <gtest/gtest.h>

#include "plan/burst_planner.hpp"
#include "pricing/burst_costs.hpp"
#include "pricing/device_model.hpp"

namespace {

wt::Graph load(const std::string& name) {
  return wt::Graph::load(std::string(WT_SOURCE_DIR) + "/models/" + name + ".toml");
}

std::vector<std::string> names(const std::vector<wt::PlanningUnit>& units) {
  std::vector<std::string> n;
  for (const auto& u : units) n.push_back(u.name);
  return n;
}

TEST(BurstUnits, FollowersJoinTheirProducer) {
  const wt::Graph g = load("lenet");
  const auto units = wt::burst_units(g);
  // Every node in exactly one unit, in order; no unit starts with a follower.
  int next = 0;
  for (const auto& u : units) {
    EXPECT_EQ(u.node_begin, next);
    next = u.node_end;
    const std::string& type = g.nodes[size_t(u.node_begin)].type;
    EXPECT_TRUE(type != "relu" && type != "flatten" && type != "softmax_xent") << u.name;
  }
  EXPECT_EQ(next, int(g.nodes.size()));
  EXPECT_EQ(g.nodes[size_t(units.back().node_end - 1)].type, "softmax_xent")
      << "the loss runs where its input is";
}

TEST(BurstUnits, AResidualBlockIsOneUnit) {
  const wt::Graph g = load("resnet");
  const auto units = wt::burst_units(g);
  // No unit boundary inside a block: every node after a boundary reads only the node before it
  // or later ones (a single live tensor crosses).
  for (size_t k = 1; k < units.size(); ++k) {
    const int b = units[k].node_begin;
    for (int j = b; j < int(g.nodes.size()); ++j)
      for (int src : g.nodes[size_t(j)].inputs) EXPECT_GE(src, b - 1) << units[k].name;
  }
  // The stem, three blocks, and the head: fewer units than the 31 nodes.
  bool block = false;
  for (const auto& u : units) {
    for (int j = u.node_begin; j < u.node_end; ++j)
      block = block || g.nodes[size_t(j)].type == "add";
  }
  EXPECT_TRUE(block);
  EXPECT_LE(units.size(), 8u) << testing::PrintToString(names(units));
}

TEST(BurstUnits, ForcedCountsPerNodeBecomeCountsPerUnit) {
  const wt::Graph g = load("lenet");
  const auto units = wt::burst_units(g);
  std::vector<int64_t> nodes(g.nodes.size(), 2);
  EXPECT_EQ(wt::unit_counts_from_nodes(g, units, nodes), std::vector<int>(units.size(), 2));
  // A follower on another count than its producer names itself.
  int follower = -1;
  for (const auto& u : units)
    if (u.node_end - u.node_begin > 1) follower = u.node_begin + 1;
  ASSERT_GE(follower, 0);
  nodes[size_t(follower)] = 1;
  try {
    wt::unit_counts_from_nodes(g, units, nodes);
    FAIL() << "a follower with its own count must be refused";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(g.nodes[size_t(follower)].name), std::string::npos)
        << e.what();
  }
  nodes.pop_back();
  EXPECT_THROW(wt::unit_counts_from_nodes(g, units, nodes), std::invalid_argument);
}

TEST(BurstCounts, PowersOfTwoAndTheRankCountThatDivideTheBatch) {
  EXPECT_EQ(wt::burst_counts(8, 32), (std::vector<int>{1, 2, 4, 8}));
  EXPECT_EQ(wt::burst_counts(6, 48), (std::vector<int>{1, 2, 4, 6}));
  EXPECT_EQ(wt::burst_counts(1024, 32), (std::vector<int>{1, 2, 4, 8, 16, 32}));
  EXPECT_EQ(wt::burst_counts(4, 6), (std::vector<int>{1, 2}));
}

TEST(BurstCosts, TermsFollowTheModel) {
  const wt::Graph g = load("vgg16_sim");
  const wt::CostModel costs(g, {}, wt::load_device_model("a100"), nullptr, 1);
  const auto units = wt::burst_units(g);
  const std::vector<int> counts = wt::burst_counts(8, 32);
  const wt::BurstCosts t = wt::burst_cost_table(costs, units, counts, 32);
  ASSERT_EQ(t.units(), int(units.size()));
  for (int u = 0; u < t.units(); ++u) {
    EXPECT_EQ(t.sync[size_t(u)][0], 0.0) << "one rank has nothing to synchronise";
    for (size_t h = 0; h < counts.size(); ++h) {
      EXPECT_EQ(t.comm[size_t(u)][h][h], 0.0) << "the same count moves nothing (sticky layout)";
      for (size_t k = 0; k < counts.size(); ++k)  // egress and ingress are symmetric
        EXPECT_DOUBLE_EQ(t.comm[size_t(u)][h][k], t.comm[size_t(u)][k][h]);
    }
    for (size_t k = 1; k < counts.size(); ++k)
      EXPECT_LE(t.comp[size_t(u)][k], t.comp[size_t(u)][k - 1] * 1.0001) << units[size_t(u)].name;
  }
  // fc6 (25088 x 4096, 411 MB of gradient) costs far more to synchronise than conv1_1 (7 KB,
  // all latency).
  size_t fc6 = 0;
  while (units[fc6].name.rfind("fc6", 0) != 0) ++fc6;
  EXPECT_GT(t.sync[fc6].back(), 20 * t.sync[0].back());
  // From 1 rank to 8: 28 of 32 rows leave rank 0, forward and back: 2 (alpha + 28 rows / beta).
  const int64_t row = costs.saved_bytes(0, units[1].node_begin - 1, units[1].node_begin, 1);
  EXPECT_DOUBLE_EQ(t.comm[1][0][3], 2 * costs.message_s(28 * row, 0, 7));
}

TEST(BurstPlanOnVgg16, FullyConnectedLayersLeaveDataParallelism) {
  // DeepPool's Fig. 9a direction: at global batch 32 on 8 A100s the fully connected layers run on
  // fewer ranks than the convolutions, and the step beats data parallelism.
  const wt::Graph g = load("vgg16_sim");
  const wt::CostModel costs(g, {}, wt::load_device_model("a100"), nullptr, 1);
  const auto units = wt::burst_units(g);
  const wt::BurstCosts t = wt::burst_cost_table(costs, units, wt::burst_counts(8, 32), 32);
  const wt::BurstPlan plan = wt::plan_burst(t, wt::BurstOptions{});
  EXPECT_EQ(plan.units.front().count, 8);
  EXPECT_LT(plan.units.back().count, 8);
  double dp = 0;
  for (int u = 0; u < t.units(); ++u) dp += t.comp[size_t(u)].back() + t.sync[size_t(u)].back();
  EXPECT_LT(plan.step_s, dp);
}

}  // namespace

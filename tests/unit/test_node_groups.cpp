// Waterwave's node groups (plan/node_groups.hpp) on memory profiles: contiguous, every node's
// forward and backward in exactly one group, forward groups first, each group's net at least the
// split in size except the last of each phase and those cut short by a node over the split (a
// group of its own), the Step in the last group, transient peaks; Waterwave-s's two cuts, at the
// memory peak and at the turn.
#include <gtest/gtest.h>

#include "plan/node_groups.hpp"
#include "tensor/rng.hpp"

namespace {

wt::NodeMemoryProfile chain(const std::vector<int64_t>& kept) {
  wt::NodeMemoryProfile p;
  for (int64_t bytes : kept) {
    p.forward.push_back({bytes, bytes});
    p.backward.push_back({-bytes, 0});
  }
  return p;
}

TEST(NodeGroups, CutsEachPhaseWhereItsNetReachesTheSplit) {
  // Forward +4 +4 +1 +1 +4 | backward (from node 4 down) -4 -1 -1 -4 -4, split 5.
  const auto groups = wt::node_groups(chain({4, 4, 1, 1, 4}), 5);
  EXPECT_EQ(wt::describe_groups(groups, 5),
            "F0-1 +0.0 MB | F2-4 +0.0 MB | B4-3 -0.0 MB | B2-1 -0.0 MB | B0 -0.0 MB step");
  ASSERT_EQ(groups.size(), 5u);
  EXPECT_EQ(groups[0].net, 8);
  EXPECT_EQ(groups[1].net, 6);  // the turn closes the forward's last group
  EXPECT_EQ(groups[2].net, -5);
  EXPECT_EQ(groups[3].net, -5);
  EXPECT_EQ(groups[4].net, -4);  // the backward's last group may be short
  EXPECT_FALSE(groups[3].steps);
  EXPECT_TRUE(groups[4].steps);
  for (const auto& g : groups) EXPECT_FALSE(g.oversized);
}

TEST(NodeGroups, TransientPeaksCountFromTheGroupsStart) {
  wt::NodeMemoryProfile p;
  p.forward = {{10, 30}, {5, 5}, {0, 50}};  // node 2 allocates 50 and frees it all (a workspace)
  p.backward = {{-10, 0}, {-5, 20}, {0, 0}};
  const auto groups = wt::node_groups(p, 1000);  // one group per phase
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].net, 15);
  EXPECT_EQ(groups[0].peak, 65);  // 15 in use when node 2 begins, +50 transient
  EXPECT_EQ(groups[1].net, -15);
  EXPECT_EQ(groups[1].peak, 20);  // node 1's backward, with nothing freed yet
}

TEST(NodeGroups, PartitionPropertiesOnRandomProfiles) {
  wt::Rng rng(5);
  for (int trial = 0; trial < 1000; ++trial) {
    std::vector<int64_t> kept(1 + rng.below(30));
    for (auto& b : kept) b = int64_t(rng.below(100));
    const int64_t split = 1 + int64_t(rng.below(400));
    const auto groups = wt::node_groups(chain(kept), split);
    const int n = int(kept.size());
    int next_pass = 0;
    bool backward_seen = false;
    for (size_t g = 0; g < groups.size(); ++g) {
      const wt::NodeGroup& group = groups[g];
      ASSERT_EQ(group.pass_begin, next_pass) << "trial " << trial;
      ASSERT_LT(group.pass_begin, group.pass_end);
      next_pass = group.pass_end;
      // A group never spans the turn: forward groups are the ANGs, backward ones the DNGs.
      ASSERT_EQ(group.allocating, group.pass_end <= n) << "trial " << trial;
      ASSERT_TRUE(group.pass_end <= n || group.pass_begin >= n);
      if (group.allocating) {
        ASSERT_FALSE(backward_seen) << "a forward group after a backward one, trial " << trial;
        ASSERT_GE(group.net, 0);
      } else {
        backward_seen = true;
        ASSERT_LE(group.net, 0);
      }
      // A node that reaches the split alone is a group of its own, and only such a node is.
      bool any_over = false;
      for (int p = group.pass_begin; p < group.pass_end; ++p)
        any_over = any_over || kept[size_t(wt::pass_node(p, n))] >= split;
      ASSERT_EQ(group.oversized, any_over) << "trial " << trial;
      if (group.oversized) {
        ASSERT_EQ(group.pass_end - group.pass_begin, 1);
      }
      const bool last_of_phase = g + 1 == groups.size() ||
                                 groups[g + 1].allocating != group.allocating ||
                                 groups[g + 1].oversized;
      if (!last_of_phase && !group.oversized) {
        ASSERT_GE(std::llabs(group.net), split) << "trial " << trial;
      }
      ASSERT_EQ(group.steps, g + 1 == groups.size());
    }
    ASSERT_EQ(next_pass, 2 * n);
  }
}

TEST(NodeGroups, ANodeOverTheSplitIsAGroupOfItsOwn) {
  // Node 1 keeps 9 against a split of 5: it closes node 0's group early and stands alone; so does
  // its backward. The pairing can then put it where its bytes fit, not drag its neighbours along.
  const auto groups = wt::node_groups(chain({2, 9, 2, 2}), 5);
  EXPECT_EQ(wt::describe_groups(groups, 4),
            "F0 +0.0 MB | F1 +0.0 MB! | F2-3 +0.0 MB | B3-2 -0.0 MB | B1 -0.0 MB! | B0 -0.0 MB "
            "step");
  ASSERT_EQ(groups.size(), 6u);
  EXPECT_TRUE(groups[1].oversized);
  EXPECT_EQ(groups[1].net, 9);
  EXPECT_FALSE(groups[2].oversized);
  // A transient peak over the split counts too (a workspace, an attention matrix).
  wt::NodeMemoryProfile p = chain({1, 1, 1});
  p.forward[1].peak = 7;
  EXPECT_TRUE(wt::node_groups(p, 5)[1].oversized);
}

TEST(NodeGroups, WaterwaveSCutsAtTheMemoryPeakOrAtTheTurn) {
  // The step's memory peaks in node 1's backward (a 20-byte transient on top of 10 kept), not at
  // the turn: the peak cut puts the forward and that backward pass in the first group.
  wt::NodeMemoryProfile p;
  p.forward = {{4, 4}, {3, 3}, {3, 3}};
  p.backward = {{-4, 0}, {-3, 20}, {-3, 1}};  // run 2, 1, 0
  const auto peak = wt::node_groups(p, 1, wt::Partition::Peak);
  ASSERT_EQ(peak.size(), 2u);
  EXPECT_EQ(wt::describe_groups(peak, 3), "F0-2 B2-1 +0.0 MB | B0 -0.0 MB step");
  EXPECT_EQ(peak[0].pass_end, 5);
  EXPECT_TRUE(peak[0].allocating);
  EXPECT_FALSE(peak[1].allocating);
  EXPECT_EQ(peak[0].net, 4);
  EXPECT_EQ(peak[0].peak, 27);  // 7 kept after node 2's backward, +20
  const auto turn = wt::node_groups(p, 1, wt::Partition::Turn);
  ASSERT_EQ(turn.size(), 2u);
  EXPECT_EQ(turn[0].pass_end, 3);
  EXPECT_EQ(turn[0].net, 10);
  EXPECT_EQ(turn[1].net, -10);
  // A chain that peaks at the end of its forward cuts at the turn both ways.
  const auto chain_peak = wt::node_groups(chain({2, 3, 4}), 1, wt::Partition::Peak);
  EXPECT_EQ(chain_peak[0].pass_end, 3);
  EXPECT_EQ(wt::partition_named("peak"), wt::Partition::Peak);
  EXPECT_THROW(wt::partition_named("depth"), std::invalid_argument);
}

TEST(NodeGroups, RefusesAnEmptyOrUnevenProfileAndAZeroSplit) {
  EXPECT_THROW(wt::node_groups(wt::NodeMemoryProfile{}, 5), std::invalid_argument);
  wt::NodeMemoryProfile uneven = chain({1, 2});
  uneven.backward.pop_back();
  EXPECT_THROW(wt::node_groups(uneven, 5), std::invalid_argument);
  EXPECT_THROW(wt::node_groups(chain({1}), 0), std::invalid_argument);
}

}  // namespace

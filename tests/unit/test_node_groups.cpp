// Waterwave's node groups (plan/node_groups.hpp) on memory profiles: contiguous, every node's
// forward and backward in exactly one group, forward groups first, each group's net at least the
// split in size except the last of each phase, the Step in the last group, transient peaks.
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
  // Forward +4 +4 +1 +1 +6 | backward (from node 4 down) -6 -1 -1 -4 -4, split 5.
  const auto groups = wt::node_groups(chain({4, 4, 1, 1, 6}), 5);
  EXPECT_EQ(wt::describe_groups(groups),
            "F0-1 +0.0 MB | F2-4 +0.0 MB | B4-4 -0.0 MB | B3-1 -0.0 MB | B0-0 -0.0 MB step");
  ASSERT_EQ(groups.size(), 5u);
  EXPECT_EQ(groups[0].net, 8);
  EXPECT_EQ(groups[1].net, 8);  // the turn closes the forward's last group
  EXPECT_EQ(groups[2].net, -6);
  EXPECT_EQ(groups[3].net, -6);
  EXPECT_EQ(groups[4].net, -4);  // the backward's last group may be short
  EXPECT_FALSE(groups[3].steps);
  EXPECT_TRUE(groups[4].steps);
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
    int next_forward = 0, next_backward = n;
    bool backward_seen = false;
    for (size_t g = 0; g < groups.size(); ++g) {
      const wt::NodeGroup& group = groups[g];
      if (group.forward) {
        ASSERT_FALSE(backward_seen) << "a forward group after a backward one, trial " << trial;
        ASSERT_EQ(group.node_begin, next_forward);
        next_forward = group.node_end;
        ASSERT_GE(group.net, 0);
      } else {
        backward_seen = true;
        ASSERT_EQ(group.node_end, next_backward);
        next_backward = group.node_begin;
        ASSERT_LE(group.net, 0);
      }
      ASSERT_LT(group.node_begin, group.node_end);
      const bool last_of_phase = g + 1 == groups.size() || groups[g + 1].forward != group.forward;
      if (!last_of_phase) {
        ASSERT_GE(std::llabs(group.net), split) << "trial " << trial;
      }
      ASSERT_EQ(group.steps, g + 1 == groups.size());
    }
    ASSERT_EQ(next_forward, n);
    ASSERT_EQ(next_backward, 0);
  }
}

TEST(NodeGroups, RefusesAnEmptyOrUnevenProfileAndAZeroSplit) {
  EXPECT_THROW(wt::node_groups(wt::NodeMemoryProfile{}, 5), std::invalid_argument);
  wt::NodeMemoryProfile uneven = chain({1, 2});
  uneven.backward.pop_back();
  EXPECT_THROW(wt::node_groups(uneven, 5), std::invalid_argument);
  EXPECT_THROW(wt::node_groups(chain({1}), 0), std::invalid_argument);
}

}  // namespace

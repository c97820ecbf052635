// GPU assignment rules (device/gpu_assignment.hpp): which device a rank opens, and which ranks of
// a node really share one GPU once their UUIDs are known.
#include <gtest/gtest.h>

#include "device/gpu_assignment.hpp"

namespace {

TEST(GpuAssignment, LocalRankModuloVisibleGpus) {
  EXPECT_EQ(wt::gpu_for_local_rank(0, 4), 0);
  EXPECT_EQ(wt::gpu_for_local_rank(3, 4), 3);
  EXPECT_EQ(wt::gpu_for_local_rank(5, 4), 1);  // more ranks than GPUs: wraps (then shares)
  EXPECT_EQ(wt::gpu_for_local_rank(2, 1), 0);  // one GPU pinned per rank: always its device 0
  EXPECT_THROW(wt::gpu_for_local_rank(0, 0), std::invalid_argument);
}

TEST(GpuAssignment, PinnedGpusPerRankAreNotShared) {
  // srun --gpus-per-task=1: each rank sees one GPU as device 0, a different one for each.
  EXPECT_FALSE(wt::find_sharing({"GPU-a", "GPU-b", "GPU-c", "GPU-d"}).any());
}

TEST(GpuAssignment, RanksOnOneGpuAreNamedWithIt) {
  // 4 ranks on a 2-GPU node: 0 and 2 on GPU-a, 1 and 3 on GPU-b.
  const wt::GpuSharing sharing = wt::find_sharing({"GPU-a", "GPU-b", "GPU-a", "GPU-b"});
  ASSERT_EQ(sharing.groups.size(), 2u);
  EXPECT_EQ(sharing.groups[0].gpu, "GPU-a");
  EXPECT_EQ(sharing.groups[0].local_ranks, (std::vector<int>{0, 2}));
  EXPECT_EQ(wt::describe_sharing(sharing, "n7"),
            "node-local ranks 0 and 2 share GPU GPU-a; node-local ranks 1 and 3 share GPU GPU-b "
            "on node n7");
  const wt::GpuSharing three = wt::find_sharing({"GPU-x", "GPU-x", "GPU-x"});
  EXPECT_EQ(wt::describe_sharing(three, "n1"),
            "node-local ranks 0, 1 and 2 share GPU GPU-x on node n1");
}

}  // namespace

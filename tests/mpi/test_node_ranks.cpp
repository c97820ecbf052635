// gather_on_node (comm/node_ranks.hpp), which decides each rank's GPU: on one machine every rank
// is on the node, in world-rank order, and gets every rank's string, lengths differing.
#include <gtest/gtest.h>
#include <mpi.h>

#include <string>

#include "comm/node_ranks.hpp"

namespace {

TEST(NodeRanks, EveryRankGathersTheNodesStringsInRankOrder) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const wt::NodeRanks node = wt::gather_on_node("rank" + std::string(size_t(rank), '+'));
  EXPECT_EQ(node.local_rank, rank);
  EXPECT_EQ(node.local_ranks, size);
  EXPECT_FALSE(node.node.empty());
  ASSERT_EQ(node.gathered.size(), size_t(size));
  for (int r = 0; r < size; ++r)
    EXPECT_EQ(node.gathered[size_t(r)], "rank" + std::string(size_t(r), '+'));
  // An empty string from every rank (the first gather of a GPU choice) works too.
  EXPECT_EQ(wt::gather_on_node("").gathered, std::vector<std::string>(size_t(size)));
}

}  // namespace

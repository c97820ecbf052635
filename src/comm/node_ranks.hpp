#pragma once
// The ranks that share this rank's node (MPI_Comm_split_type over shared memory): this rank's
// place among them, and a gather of one string from each. Collective over MPI_COMM_WORLD: every
// rank calls it, in the same order. Without MPI initialised, the process is its node's only rank.
#include <string>
#include <vector>

namespace wt {

struct NodeRanks {
  int local_rank = 0;
  int local_ranks = 1;
  std::string node;  // the host name
  // Each node-local rank's `mine`, by node-local rank.
  std::vector<std::string> gathered;
};

NodeRanks gather_on_node(const std::string& mine);

}  // namespace wt

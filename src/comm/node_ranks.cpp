#include "comm/node_ranks.hpp"

#include <mpi.h>
#include <unistd.h>

#include "util/mpi_check.hpp"

namespace wt {

namespace {
std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "unknown host";
  return name;
}
}  // namespace

NodeRanks gather_on_node(const std::string& mine) {
  NodeRanks ranks;
  ranks.node = host_name();
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    ranks.gathered = {mine};
    return ranks;
  }
  int world_rank = 0;
  WT_MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &world_rank));
  MPI_Comm node;
  WT_MPI_CHECK(
      MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, world_rank, MPI_INFO_NULL, &node));
  WT_MPI_CHECK(MPI_Comm_rank(node, &ranks.local_rank));
  WT_MPI_CHECK(MPI_Comm_size(node, &ranks.local_ranks));
  // Lengths first, then the characters.
  const int length = static_cast<int>(mine.size());
  std::vector<int> lengths(size_t(ranks.local_ranks)), offsets(size_t(ranks.local_ranks));
  WT_MPI_CHECK(MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, node));
  int total = 0;
  for (size_t r = 0; r < lengths.size(); ++r) {
    offsets[r] = total;
    total += lengths[r];
  }
  std::string all(size_t(total), '\0');
  WT_MPI_CHECK(MPI_Allgatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(),
                              offsets.data(), MPI_CHAR, node));
  MPI_Comm_free(&node);
  for (size_t r = 0; r < lengths.size(); ++r)
    ranks.gathered.push_back(all.substr(size_t(offsets[r]), size_t(lengths[r])));
  return ranks;
}

}  // namespace wt

#pragma once
// Collects every rank's RankTrace on one rank (MPI_Gatherv of the raw records), so one process
// writes trace.h5 with the serial HDF5 API.
#include <mpi.h>

#include <vector>

#include "io/trace_data.hpp"

namespace wt {

// Collective over `comm`. Returns every rank's trace, in rank order, on `root`; empty elsewhere.
std::vector<RankTrace> gather_rank_traces(const RankTrace& mine, MPI_Comm comm, int root = 0);

}  // namespace wt

#pragma once
// Every rank of a job must train on the same data. Ranks that read different copies of a dataset
// (a stale copy on one node's local disk) would otherwise reach an epoch boundary, or the end of
// an evaluation, at different steps and wait for each other forever.
//
// agree_on_dataset is collective over `comm`: rank 0 broadcasts its digest (a fixed 176 bytes),
// each rank compares its own, and one allreduce of one flag per rank tells every rank which ranks
// differ. When all agree that is the whole cost. When some differ, rank 0 and the lowest
// differing rank broadcast their host and file names, and every rank throws the same AgreedError
// (status 2) naming the ranks, hosts and files that differ and what differs.
#include <string>

#include "comm/communicator.hpp"
#include "data/dataset_digest.hpp"

namespace wt {

// `path`: the dataset file as this rank names it (data.path; ranks may name different paths).
void agree_on_dataset(Communicator& comm, const DatasetDigest& mine, const std::string& path);

}  // namespace wt

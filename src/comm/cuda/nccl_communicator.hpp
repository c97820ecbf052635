#pragma once
// NCCL communicator for GPU ranks, bootstrapped over MPI: for every group, the group's first rank
// creates a ncclUniqueId and broadcasts it over the MPI world, then the members call
// ncclCommInitRank. Collectives are enqueued on one CUDA stream; a request completes when a CUDA
// event recorded after the collective has fired. Buffers are device pointers. Host-side metrics
// (double allreduce, byte broadcast, barrier) go over MPI.
#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#include <vector>

#include "comm/communicator.hpp"

namespace wt {

class NcclCommunicator : public Communicator {
 public:
  NcclCommunicator(MPI_Comm world, int local_device);
  ~NcclCommunicator() override;
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int add_group(const std::vector<int>& world_ranks) override;
  std::unique_ptr<CommRequest> iallreduce_sum(float* data, int64_t count, int group) override;
  void allreduce_sum(float* data, int64_t count, int group) override;
  void allreduce_sum(double* data, int64_t count, int group) override;
  void broadcast(float* data, int64_t count, int root_world_rank, int group) override;
  std::unique_ptr<CommRequest> ibroadcast_words(uint32_t* data, int64_t count, int root_world_rank,
                                                int group) override;
  void scatter_bytes(const void* send, const std::vector<int64_t>& bytes_per_rank, void* recv,
                     int root_world_rank) override;
  void broadcast_bytes(void* data, int64_t bytes, int root_world_rank) override;
  std::unique_ptr<CommRequest> isend(const float* data, int64_t count, int peer, int tag) override;
  std::unique_ptr<CommRequest> irecv(float* data, int64_t count, int peer, int tag) override;
  void barrier() override;
  cudaStream_t stream() const { return stream_; }

 private:
  ncclComm_t group_comm(int group) const;
  std::unique_ptr<CommRequest> record();
  MPI_Comm mpi_ = MPI_COMM_NULL;
  std::vector<ncclComm_t> comms_;  // by group id; nullptr where not a member
  std::vector<std::vector<int>> group_ranks_;
  cudaStream_t stream_ = nullptr;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace wt

#pragma once
// NCCL communicator for GPU ranks, bootstrapped over MPI: for every group, the group's first rank
// creates a ncclUniqueId and broadcasts it over the MPI world, then the members call
// ncclCommInitRank (once per group, at add_group). Operations on device buffers are enqueued on
// one CUDA stream, native_stream(): the executor orders them after the producing stream with an
// event and orders later work after them with another (device/cuda/cuda_program_events.cpp), so
// the host never waits for a collective. A request completes when a CUDA event recorded after its
// operation has fired. Host buffers (a metric, a token) and host-side data (double allreduce,
// bytes, barrier) go over MPI, whose communicator mirrors the world.
#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#include <memory>
#include <vector>

#include "comm/communicator.hpp"
#include "comm/mpi_communicator.hpp"

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
  std::unique_ptr<CommRequest> ibroadcast(float* data, int64_t count, int root_world_rank,
                                          int group) override;
  std::unique_ptr<CommRequest> ibroadcast_words(uint32_t* data, int64_t count, int root_world_rank,
                                                int group) override;
  std::unique_ptr<CommRequest> ireduce_sum(float* data, int64_t count, int root_world_rank,
                                           int group) override;
  void scatter_bytes(const void* send, const std::vector<int64_t>& bytes_per_rank, void* recv,
                     int root_world_rank) override;
  void broadcast_bytes(void* data, int64_t bytes, int root_world_rank) override;
  std::unique_ptr<CommRequest> isend(const float* data, int64_t count, int peer, int tag) override;
  std::unique_ptr<CommRequest> irecv(float* data, int64_t count, int peer, int tag) override;
  void barrier() override;
  Communicator& underlying() override { return *this; }
  void* native_stream() override { return stream_; }
  cudaStream_t stream() const { return stream_; }

 private:
  class EventRequest;
  // A communicator over `world_ranks` from a unique id their first rank broadcasts over MPI
  // (collective over the world); nullptr where this rank is not a member.
  ncclComm_t init_comm(const std::vector<int>& world_ranks);
  ncclComm_t group_comm(int group) const;
  int group_root(int group, int root_world_rank) const;
  // A request that completes with the operation just enqueued on `comm`.
  std::unique_ptr<CommRequest> record(ncclComm_t comm);
  cudaEvent_t take_event();
  MpiCommunicator mpi_;            // host buffers and host-side data; the bootstrap
  std::vector<ncclComm_t> comms_;  // by group id; nullptr where not a member
  std::vector<std::vector<int>> group_ranks_;
  std::vector<cudaEvent_t> free_events_;  // for requests, reused
  cudaStream_t stream_ = nullptr;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace wt

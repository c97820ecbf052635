#pragma once
// MPI over pinned host memory for device buffers (CUDA builds): ranks sharing one GPU, which NCCL
// refuses. A device buffer is copied to a pinned host buffer when the operation starts (the host
// starts it only once the producing stream has reached it: cuda_program_events.cpp), MPI moves
// the host copy, and a received or reduced result is copied back, synchronously, when test()
// first finds it complete. Host buffers (and host-side data: metrics, bytes) go to MPI as they are.
#include <cuda_runtime.h>

#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "comm/mpi_communicator.hpp"

namespace wt {

class StagedCommunicator final : public Communicator {
 public:
  StagedCommunicator(MPI_Comm world, int gpu);
  ~StagedCommunicator() override;
  int rank() const override { return mpi_.rank(); }
  int size() const override { return mpi_.size(); }
  int add_group(const std::vector<int>& world_ranks) override {
    return mpi_.add_group(world_ranks);
  }
  std::unique_ptr<CommRequest> iallreduce_sum(float* data, int64_t count, int group) override;
  void allreduce_sum(float* data, int64_t count, int group) override;
  void allreduce_sum(double* data, int64_t count, int group) override {
    mpi_.allreduce_sum(data, count, group);
  }
  void broadcast(float* data, int64_t count, int root_world_rank, int group) override;
  void broadcast_bytes(void* data, int64_t bytes, int root_world_rank) override {
    mpi_.broadcast_bytes(data, bytes, root_world_rank);
  }
  std::unique_ptr<CommRequest> isend(const float* data, int64_t count, int peer, int tag) override;
  std::unique_ptr<CommRequest> irecv(float* data, int64_t count, int peer, int tag) override;
  void barrier() override { mpi_.barrier(); }
  void scatter_bytes(const void* send, const std::vector<int64_t>& bytes_per_rank, void* recv,
                     int root_world_rank) override {
    mpi_.scatter_bytes(send, bytes_per_rank, recv, root_world_rank);
  }
  std::unique_ptr<CommRequest> ibroadcast_words(uint32_t* data, int64_t count, int root_world_rank,
                                                int group) override;
  std::unique_ptr<CommRequest> ibroadcast(float* data, int64_t count, int root_world_rank,
                                          int group) override;
  std::unique_ptr<CommRequest> ireduce_sum(float* data, int64_t count, int root_world_rank,
                                           int group) override;
  Communicator& underlying() override { return mpi_; }

  // A pinned buffer of at least `bytes` (reused: cudaHostAlloc is slow), and its return.
  void* take_pinned(size_t bytes);
  void give_pinned(void* ptr, size_t bytes);

 private:
  class Request;
  // The operation on a pinned copy of `data` (copied in first when copy_in), copied back into
  // `data` on completion when copy_back.
  std::unique_ptr<CommRequest> staged(void* data, size_t bytes, bool copy_in, bool copy_back,
                                      const std::function<std::unique_ptr<CommRequest>(void*)>& op);
  MpiCommunicator mpi_;
  std::multimap<size_t, void*> pinned_;  // free pinned buffers by size
};

}  // namespace wt

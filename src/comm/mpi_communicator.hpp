#pragma once
#include <mpi.h>

#include <memory>
#include <vector>

#include "comm/communicator.hpp"
#include "comm/shm_allreduce.hpp"
#include "comm/shm_point_to_point.hpp"

namespace wt {

// MPI_Scatterv over `comm` of bytes_per_rank[r] bytes to each rank r (counts and displacements
// checked against int overflow); the MPI and NCCL communicators' scatter_bytes.
void scatter_bytes_over(MPI_Comm comm, int rank, const void* send,
                        const std::vector<int64_t>& bytes_per_rank, void* recv, int root);

class MpiCommunicator : public Communicator {
 public:
  // Duplicates `world` so wavetrain's traffic never matches a user's or a library's.
  // point_to_point_ring_bytes: each rank's ShmPointToPoint ring (0: none); by default
  // WAVETRAIN_SHM_POINT_TO_POINT_MB, or 8 MiB.
  explicit MpiCommunicator(MPI_Comm world = MPI_COMM_WORLD, int64_t point_to_point_ring_bytes = -1);
  ~MpiCommunicator() override;
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int add_group(const std::vector<int>& world_ranks) override;
  std::unique_ptr<CommRequest> iallreduce_sum(float* data, int64_t count, int group) override;
  void allreduce_sum(float* data, int64_t count, int group) override;
  void allreduce_sum(double* data, int64_t count, int group) override;
  void broadcast(float* data, int64_t count, int root_world_rank, int group) override;
  void broadcast_bytes(void* data, int64_t bytes, int root_world_rank) override;
  std::unique_ptr<CommRequest> isend(const float* data, int64_t count, int peer, int tag) override;
  std::unique_ptr<CommRequest> irecv(float* data, int64_t count, int peer, int tag) override;
  void barrier() override;
  void scatter_bytes(const void* send, const std::vector<int64_t>& bytes_per_rank, void* recv,
                     int root_world_rank) override;
  std::unique_ptr<CommRequest> ibroadcast_words(uint32_t* data, int64_t count, int root_world_rank,
                                                int group) override;
  std::unique_ptr<CommRequest> ibroadcast(float* data, int64_t count, int root_world_rank,
                                          int group) override;
  std::unique_ptr<CommRequest> ireduce_sum(float* data, int64_t count, int root_world_rank,
                                           int group) override;
  MPI_Comm world() const { return comms_[0]; }
  // Whether blocking float allreduces over `group` go through ShmAllreduce (all ranks on one
  // node, and not turned off with WAVETRAIN_SHM_ALLREDUCE=0).
  bool shared_memory_allreduce(int group) const { return shm_.at(group) != nullptr; }
  // The channel point-to-point messages to ranks on this node take (null when every rank is
  // alone on its node, or with WAVETRAIN_SHM_POINT_TO_POINT_MB=0).
  const ShmPointToPoint* shared_memory_point_to_point() const { return p2p_.get(); }

 private:
  MPI_Comm group_comm(int group) const;
  std::unique_ptr<CommRequest> ibroadcast_typed(void* data, int64_t count, MPI_Datatype type,
                                                int root_world_rank, int group);
  int group_rank_of(int group, int world_rank) const;
  std::vector<MPI_Comm> comms_;  // by group id; MPI_COMM_NULL where not a member
  // The host's blocking byte collectives (broadcast_bytes, scatter_bytes) have their own
  // communicator: a LoadBatch's scatter runs when the host issues it, while a device backend
  // starts the transfers issued before it only once their stream reaches them, so on one
  // communicator the ranks could call the two in different orders (MPI matches collectives by
  // call order) and hang.
  MPI_Comm host_bytes_ = MPI_COMM_NULL;
  std::vector<std::vector<int>> group_ranks_;       // world ranks of each group
  std::vector<std::unique_ptr<ShmAllreduce>> shm_;  // by group id; null where not used
  std::unique_ptr<ShmPointToPoint> p2p_;
  bool use_shm_ = true;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace wt

#include "comm/mpi_communicator.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <stdexcept>
#include <string>

#include "util/mpi_check.hpp"
#include "util/unwinding.hpp"

namespace wt {

namespace {

class MpiRequest : public CommRequest {
 public:
  MPI_Request request = MPI_REQUEST_NULL;
  bool point_to_point = false;  // else a non-blocking collective, which MPI cannot cancel
  ~MpiRequest() override {
    if (request == MPI_REQUEST_NULL) return;
    if (!exception_unwinding()) {
      MPI_Wait(&request, MPI_STATUS_IGNORE);
    } else if (point_to_point) {
      // The peer may never come (util/unwinding.hpp): withdraw it rather than wait.
      MPI_Cancel(&request);
      MPI_Request_free(&request);
    }  // a collective's request is abandoned: freeing or cancelling an active one is erroneous
  }
  bool test() override {
    if (request == MPI_REQUEST_NULL) return true;
    int flag = 0;
    WT_MPI_CHECK(MPI_Test(&request, &flag, MPI_STATUS_IGNORE));
    return flag != 0;
  }
  void wait() override { WT_MPI_CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE)); }
};

// Each rank's ring for point-to-point messages on its node: WAVETRAIN_SHM_POINT_TO_POINT_MB
// (0: every message through MPI), the same on every rank under mpirun. 8 MiB holds a few of
// the shipped decks' stage activations at their batches (lenet's conv2 output at batch 32 is
// 1.6 MB; its fc1 output, where the flops balance cuts it on 2 ranks, 32 kB); larger ones go
// through MPI.
int64_t default_ring_bytes() {
  const char* mb = std::getenv("WAVETRAIN_SHM_POINT_TO_POINT_MB");
  return int64_t(mb ? std::atof(mb) * double(1 << 20) : 8.0 * double(1 << 20));
}

}  // namespace

MpiCommunicator::MpiCommunicator(MPI_Comm world, int64_t point_to_point_ring_bytes) {
  MPI_Comm dup;
  WT_MPI_CHECK(MPI_Comm_dup(world, &dup));
  MPI_Comm_rank(dup, &rank_);
  MPI_Comm_size(dup, &size_);
  comms_.push_back(dup);
  WT_MPI_CHECK(MPI_Comm_dup(world, &host_bytes_));
  std::vector<int> all(size_);
  std::iota(all.begin(), all.end(), 0);
  group_ranks_.push_back(all);
  const char* shm = std::getenv("WAVETRAIN_SHM_ALLREDUCE");  // same on every rank under mpirun
  use_shm_ = !(shm && std::strcmp(shm, "0") == 0);
  shm_.push_back(use_shm_ ? ShmAllreduce::create(dup) : nullptr);
  p2p_ = ShmPointToPoint::create(
      dup, point_to_point_ring_bytes >= 0 ? point_to_point_ring_bytes : default_ring_bytes());
}

MpiCommunicator::~MpiCommunicator() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized || exception_unwinding()) return;  // collective: util/unwinding.hpp
  for (MPI_Comm& c : comms_)
    if (c != MPI_COMM_NULL) MPI_Comm_free(&c);
  if (host_bytes_ != MPI_COMM_NULL) MPI_Comm_free(&host_bytes_);
}

int MpiCommunicator::add_group(const std::vector<int>& world_ranks) {
  const bool member = std::find(world_ranks.begin(), world_ranks.end(), rank_) != world_ranks.end();
  // Colour by membership; key orders group ranks as listed.
  int key = 0;
  for (size_t i = 0; i < world_ranks.size(); ++i)
    if (world_ranks[i] == rank_) key = static_cast<int>(i);
  MPI_Comm c;
  WT_MPI_CHECK(MPI_Comm_split(comms_[0], member ? 0 : MPI_UNDEFINED, key, &c));
  comms_.push_back(member ? c : MPI_COMM_NULL);
  group_ranks_.push_back(world_ranks);
  shm_.push_back(member && use_shm_ ? ShmAllreduce::create(c) : nullptr);
  return static_cast<int>(comms_.size()) - 1;
}

MPI_Comm MpiCommunicator::group_comm(int group) const {
  if (group < 0 || group >= static_cast<int>(comms_.size()) || comms_[group] == MPI_COMM_NULL)
    throw std::logic_error("rank " + std::to_string(rank_) + " used group " +
                           std::to_string(group) + " it is not a member of");
  return comms_[group];
}

int MpiCommunicator::group_rank_of(int group, int world_rank) const {
  const auto& r = group_ranks_.at(group);
  auto it = std::find(r.begin(), r.end(), world_rank);
  if (it == r.end()) throw std::logic_error("root is not a member of the group");
  return static_cast<int>(it - r.begin());
}

std::unique_ptr<CommRequest> MpiCommunicator::iallreduce_sum(float* data, int64_t count,
                                                             int group) {
  auto req = std::make_unique<MpiRequest>();
  WT_MPI_CHECK(MPI_Iallreduce(MPI_IN_PLACE, data, mpi_count(count), MPI_FLOAT, MPI_SUM,
                              group_comm(group), &req->request));
  return req;
}

void MpiCommunicator::allreduce_sum(float* data, int64_t count, int group) {
  // Below a few thousand floats the barriers cost more than Open MPI's copies.
  constexpr int64_t kShmMinFloats = 4096;
  if (count >= kShmMinFloats && group >= 0 && group < int(shm_.size()) && shm_[group]) {
    group_comm(group);                          // same membership check as the MPI path
    if (shm_[group]->sum(data, count)) return;  // else a file size limit: MPI below
  }
  WT_MPI_CHECK(
      MPI_Allreduce(MPI_IN_PLACE, data, mpi_count(count), MPI_FLOAT, MPI_SUM, group_comm(group)));
}

void MpiCommunicator::allreduce_sum(double* data, int64_t count, int group) {
  WT_MPI_CHECK(
      MPI_Allreduce(MPI_IN_PLACE, data, mpi_count(count), MPI_DOUBLE, MPI_SUM, group_comm(group)));
}

void MpiCommunicator::broadcast(float* data, int64_t count, int root_world_rank, int group) {
  WT_MPI_CHECK(MPI_Bcast(data, mpi_count(count), MPI_FLOAT, group_rank_of(group, root_world_rank),
                         group_comm(group)));
}

void MpiCommunicator::broadcast_bytes(void* data, int64_t bytes, int root_world_rank) {
  WT_MPI_CHECK(MPI_Bcast(data, mpi_count(bytes), MPI_BYTE, root_world_rank, host_bytes_));
}

std::unique_ptr<CommRequest> MpiCommunicator::isend(const float* data, int64_t count, int peer,
                                                    int tag) {
  if (p2p_ && p2p_->reaches(peer)) return p2p_->isend(data, count, peer, tag);
  auto req = std::make_unique<MpiRequest>();
  req->point_to_point = true;
  WT_MPI_CHECK(MPI_Isend(data, mpi_count(count), MPI_FLOAT, peer, tag, comms_[0], &req->request));
  return req;
}

std::unique_ptr<CommRequest> MpiCommunicator::irecv(float* data, int64_t count, int peer, int tag) {
  if (p2p_ && peer < 0)  // a sender on this node sends on the channel's communicator
    throw std::logic_error("a receive from any source cannot take messages of ShmPointToPoint");
  if (p2p_ && p2p_->reaches(peer)) return p2p_->irecv(data, count, peer, tag);
  auto req = std::make_unique<MpiRequest>();
  req->point_to_point = true;
  WT_MPI_CHECK(MPI_Irecv(data, mpi_count(count), MPI_FLOAT, peer, tag, comms_[0], &req->request));
  return req;
}

std::unique_ptr<CommRequest> MpiCommunicator::ibroadcast_typed(void* data, int64_t count,
                                                               MPI_Datatype type,
                                                               int root_world_rank, int group) {
  auto req = std::make_unique<MpiRequest>();
  WT_MPI_CHECK(MPI_Ibcast(data, mpi_count(count), type, group_rank_of(group, root_world_rank),
                          group_comm(group), &req->request));
  return req;
}

std::unique_ptr<CommRequest> MpiCommunicator::ibroadcast(float* data, int64_t count,
                                                         int root_world_rank, int group) {
  return ibroadcast_typed(data, count, MPI_FLOAT, root_world_rank, group);
}

std::unique_ptr<CommRequest> MpiCommunicator::ibroadcast_words(uint32_t* data, int64_t count,
                                                               int root_world_rank, int group) {
  return ibroadcast_typed(data, count, MPI_UINT32_T, root_world_rank, group);
}

void scatter_bytes_over(MPI_Comm comm, int rank, const void* send,
                        const std::vector<int64_t>& bytes_per_rank, void* recv, int root) {
  std::vector<int> counts, displacements;
  int64_t offset = 0;
  for (int64_t b : bytes_per_rank) {
    counts.push_back(mpi_count(b));
    displacements.push_back(mpi_count(offset));  // MPI's displacements are ints too
    offset += b;
  }
  WT_MPI_CHECK(MPI_Scatterv(send, counts.data(), displacements.data(), MPI_BYTE, recv,
                            counts.at(size_t(rank)), MPI_BYTE, root, comm));
}

void MpiCommunicator::scatter_bytes(const void* send, const std::vector<int64_t>& bytes_per_rank,
                                    void* recv, int root_world_rank) {
  scatter_bytes_over(host_bytes_, rank_, send, bytes_per_rank, recv, root_world_rank);
}

std::unique_ptr<CommRequest> MpiCommunicator::ireduce_sum(float* data, int64_t count,
                                                          int root_world_rank, int group) {
  auto req = std::make_unique<MpiRequest>();
  const int root = group_rank_of(group, root_world_rank);
  MPI_Comm comm = group_comm(group);
  int me = 0;
  MPI_Comm_rank(comm, &me);
  WT_MPI_CHECK(MPI_Ireduce(me == root ? MPI_IN_PLACE : data, me == root ? data : nullptr,
                           mpi_count(count), MPI_FLOAT, MPI_SUM, root, comm, &req->request));
  return req;
}

void MpiCommunicator::barrier() { WT_MPI_CHECK(MPI_Barrier(comms_[0])); }

}  // namespace wt

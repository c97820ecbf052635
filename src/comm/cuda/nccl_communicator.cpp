#include "comm/cuda/nccl_communicator.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>

#include "comm/mpi_communicator.hpp"
#include "util/cuda_check.hpp"
#include "util/nccl_check.hpp"
#include "util/unwinding.hpp"

namespace wt {

namespace {

class CudaEventRequest : public CommRequest {
 public:
  explicit CudaEventRequest(cudaStream_t stream) {
    WT_CUDA_CHECK(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming));
    WT_CUDA_CHECK(cudaEventRecord(event_, stream));
  }
  ~CudaEventRequest() override { cudaEventDestroy(event_); }
  bool test() override {
    cudaError_t rc = cudaEventQuery(event_);
    if (rc == cudaErrorNotReady) return false;
    WT_CUDA_CHECK(rc);
    return true;
  }
  void wait() override { WT_CUDA_CHECK(cudaEventSynchronize(event_)); }

 private:
  cudaEvent_t event_ = nullptr;
};

}  // namespace

NcclCommunicator::NcclCommunicator(MPI_Comm world, int local_device) {
  MPI_Comm_dup(world, &mpi_);
  MPI_Comm_rank(mpi_, &rank_);
  MPI_Comm_size(mpi_, &size_);
  WT_CUDA_CHECK(cudaSetDevice(local_device));
  WT_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  std::vector<int> all(size_);
  std::iota(all.begin(), all.end(), 0);
  comms_.push_back(nullptr);
  group_ranks_.push_back({});
  // Group 0 (the world) is created like any other group.
  const int id = add_group(all);
  comms_[0] = comms_[id];
  group_ranks_[0] = all;
  comms_.pop_back();
  group_ranks_.pop_back();
}

NcclCommunicator::~NcclCommunicator() {
  // ncclCommDestroy waits for the communicator's outstanding collectives, which peers that are
  // not unwinding may never join: abort them instead (util/unwinding.hpp).
  const bool unwinding = exception_unwinding();
  for (ncclComm_t c : comms_) {
    if (!c) continue;
    if (unwinding)
      ncclCommAbort(c);
    else
      ncclCommDestroy(c);
  }
  if (stream_) cudaStreamDestroy(stream_);
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && !unwinding && mpi_ != MPI_COMM_NULL) MPI_Comm_free(&mpi_);
}

int NcclCommunicator::add_group(const std::vector<int>& world_ranks) {
  ncclUniqueId id;
  const int root = world_ranks.front();
  if (rank_ == root) WT_NCCL_CHECK(ncclGetUniqueId(&id));
  MPI_Bcast(&id, sizeof(id), MPI_BYTE, root, mpi_);
  auto it = std::find(world_ranks.begin(), world_ranks.end(), rank_);
  ncclComm_t comm = nullptr;
  if (it != world_ranks.end()) {
    WT_NCCL_CHECK(ncclCommInitRank(&comm, static_cast<int>(world_ranks.size()), id,
                                   static_cast<int>(it - world_ranks.begin())));
  }
  comms_.push_back(comm);
  group_ranks_.push_back(world_ranks);
  return static_cast<int>(comms_.size()) - 1;
}

ncclComm_t NcclCommunicator::group_comm(int group) const {
  if (group < 0 || group >= static_cast<int>(comms_.size()) || !comms_[group])
    throw std::logic_error("rank " + std::to_string(rank_) + " is not a member of group " +
                           std::to_string(group));
  return comms_[group];
}

std::unique_ptr<CommRequest> NcclCommunicator::record() {
  return std::make_unique<CudaEventRequest>(stream_);
}

std::unique_ptr<CommRequest> NcclCommunicator::iallreduce_sum(float* data, int64_t count,
                                                              int group) {
  WT_NCCL_CHECK(ncclAllReduce(data, data, static_cast<size_t>(count), ncclFloat, ncclSum,
                              group_comm(group), stream_));
  return record();
}

void NcclCommunicator::allreduce_sum(float* data, int64_t count, int group) {
  iallreduce_sum(data, count, group)->wait();
}

void NcclCommunicator::allreduce_sum(double* data, int64_t count, int group) {
  // Host-side statistics: over MPI, whose communicator mirrors the world group.
  if (group != 0) throw std::logic_error("host double allreduce is world-only");
  MPI_Allreduce(MPI_IN_PLACE, data, static_cast<int>(count), MPI_DOUBLE, MPI_SUM, mpi_);
}

void NcclCommunicator::broadcast(float* data, int64_t count, int root_world_rank, int group) {
  const auto& r = group_ranks_.at(group);
  const int root = static_cast<int>(std::find(r.begin(), r.end(), root_world_rank) - r.begin());
  WT_NCCL_CHECK(ncclBroadcast(data, data, static_cast<size_t>(count), ncclFloat, root,
                              group_comm(group), stream_));
  WT_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

std::unique_ptr<CommRequest> NcclCommunicator::ibroadcast_words(uint32_t* data, int64_t count,
                                                                int root_world_rank, int group) {
  const auto& r = group_ranks_.at(group);
  const int root = static_cast<int>(std::find(r.begin(), r.end(), root_world_rank) - r.begin());
  WT_NCCL_CHECK(ncclBroadcast(data, data, static_cast<size_t>(count), ncclUint32, root,
                              group_comm(group), stream_));
  return record();
}

// Host buffers (batches read from the file), over MPI, whose communicator mirrors the world.
void NcclCommunicator::scatter_bytes(const void* send, const std::vector<int64_t>& bytes_per_rank,
                                     void* recv, int root_world_rank) {
  scatter_bytes_over(mpi_, rank_, send, bytes_per_rank, recv, root_world_rank);
}

void NcclCommunicator::broadcast_bytes(void* data, int64_t bytes, int root_world_rank) {
  MPI_Bcast(data, static_cast<int>(bytes), MPI_BYTE, root_world_rank, mpi_);
}

std::unique_ptr<CommRequest> NcclCommunicator::isend(const float* data, int64_t count, int peer,
                                                     int) {
  WT_NCCL_CHECK(
      ncclSend(data, static_cast<size_t>(count), ncclFloat, peer, group_comm(0), stream_));
  return record();
}

std::unique_ptr<CommRequest> NcclCommunicator::irecv(float* data, int64_t count, int peer, int) {
  WT_NCCL_CHECK(
      ncclRecv(data, static_cast<size_t>(count), ncclFloat, peer, group_comm(0), stream_));
  return record();
}

void NcclCommunicator::barrier() { MPI_Barrier(mpi_); }

}  // namespace wt

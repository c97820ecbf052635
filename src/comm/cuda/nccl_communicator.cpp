#include "comm/cuda/nccl_communicator.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>

#include "comm/cuda/gpu_communicators.hpp"
#include "util/cuda_check.hpp"
#include "util/nccl_check.hpp"
#include "util/unwinding.hpp"

namespace wt {

namespace {

bool on_device(const void* ptr) {
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, ptr) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return attributes.type == cudaMemoryTypeDevice || attributes.type == cudaMemoryTypeManaged;
}

}  // namespace

class NcclCommunicator::EventRequest : public CommRequest {
 public:
  EventRequest(NcclCommunicator& owner, cudaEvent_t event, ncclComm_t comm)
      : owner_(owner), event_(event), comm_(comm) {}
  ~EventRequest() override { owner_.free_events_.push_back(event_); }
  bool test() override {
    cudaError_t rc = cudaEventQuery(event_);
    if (rc != cudaErrorNotReady) {
      WT_CUDA_CHECK(rc);
      return true;
    }
    // Not done yet: a peer that failed (a lost connection, an abort) shows here at once, where
    // a wait would hang until the stall watchdog's limit.
    ncclResult_t async = ncclSuccess;
    if (comm_ && ncclCommGetAsyncError(comm_, &async) == ncclSuccess && async != ncclSuccess &&
        async != ncclInProgress)
      throw DeviceLibraryError(std::string("NCCL reported an asynchronous error on rank ") +
                               std::to_string(owner_.rank()) + ": " + ncclGetErrorString(async) +
                               (ncclGetLastError(comm_)
                                    ? std::string(" (") + ncclGetLastError(comm_) + ")"
                                    : std::string()));
    return false;
  }
  void wait() override { WT_CUDA_CHECK(cudaEventSynchronize(event_)); }

 private:
  NcclCommunicator& owner_;
  cudaEvent_t event_;
  ncclComm_t comm_;  // the operation's (nullptr: none to ask)
};

NcclCommunicator::NcclCommunicator(MPI_Comm world, int local_device) : mpi_(world) {
  rank_ = mpi_.rank();
  size_ = mpi_.size();
  WT_CUDA_CHECK(cudaSetDevice(local_device));
  int least = 0, greatest = 0;
  WT_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  // The most urgent stream: a collective never waits behind compute issued after it.
  WT_CUDA_CHECK(cudaStreamCreateWithPriority(&stream_, cudaStreamNonBlocking, greatest));
  std::vector<int> all(size_);
  std::iota(all.begin(), all.end(), 0);
  comms_.push_back(init_comm(all));  // group 0, the world (the MPI side has it already)
  group_ranks_.push_back(all);
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
  for (cudaEvent_t e : free_events_) cudaEventDestroy(e);
  if (stream_) cudaStreamDestroy(stream_);
}

int NcclCommunicator::add_group(const std::vector<int>& world_ranks) {
  // The MPI side keeps the same group ids (host buffers of a group go there).
  const int mpi_id = mpi_.add_group(world_ranks);
  comms_.push_back(init_comm(world_ranks));
  group_ranks_.push_back(world_ranks);
  const int nccl_id = static_cast<int>(comms_.size()) - 1;
  if (mpi_id != nccl_id) throw std::logic_error("NCCL and MPI group ids diverged");
  return nccl_id;
}

ncclComm_t NcclCommunicator::init_comm(const std::vector<int>& world_ranks) {
  ncclUniqueId id;
  const int root = world_ranks.front();
  if (rank_ == root) WT_NCCL_CHECK(ncclGetUniqueId(&id));
  MPI_Bcast(&id, sizeof(id), MPI_BYTE, root, mpi_.world());
  auto it = std::find(world_ranks.begin(), world_ranks.end(), rank_);
  ncclComm_t comm = nullptr;
  if (it != world_ranks.end()) {
    WT_NCCL_CHECK(ncclCommInitRank(&comm, static_cast<int>(world_ranks.size()), id,
                                   static_cast<int>(it - world_ranks.begin())));
  }
  return comm;
}

ncclComm_t NcclCommunicator::group_comm(int group) const {
  if (group < 0 || group >= static_cast<int>(comms_.size()) || !comms_[group])
    throw std::logic_error("rank " + std::to_string(rank_) + " is not a member of group " +
                           std::to_string(group));
  return comms_[group];
}

int NcclCommunicator::group_root(int group, int root_world_rank) const {
  const auto& r = group_ranks_.at(size_t(group));
  return static_cast<int>(std::find(r.begin(), r.end(), root_world_rank) - r.begin());
}

cudaEvent_t NcclCommunicator::take_event() {
  if (!free_events_.empty()) {
    cudaEvent_t e = free_events_.back();
    free_events_.pop_back();
    return e;
  }
  cudaEvent_t e = nullptr;
  WT_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  return e;
}

std::unique_ptr<CommRequest> NcclCommunicator::record(ncclComm_t comm) {
  cudaEvent_t e = take_event();
  WT_CUDA_CHECK(cudaEventRecord(e, stream_));
  return std::make_unique<EventRequest>(*this, e, comm);
}

std::unique_ptr<CommRequest> NcclCommunicator::iallreduce_sum(float* data, int64_t count,
                                                              int group) {
  if (!on_device(data)) return mpi_.iallreduce_sum(data, count, group);
  WT_NCCL_CHECK(ncclAllReduce(data, data, static_cast<size_t>(count), ncclFloat, ncclSum,
                              group_comm(group), stream_));
  return record(group_comm(group));
}

void NcclCommunicator::allreduce_sum(float* data, int64_t count, int group) {
  iallreduce_sum(data, count, group)->wait();
}

void NcclCommunicator::allreduce_sum(double* data, int64_t count, int group) {
  mpi_.allreduce_sum(data, count, group);  // host-side statistics
}

void NcclCommunicator::broadcast(float* data, int64_t count, int root_world_rank, int group) {
  ibroadcast(data, count, root_world_rank, group)->wait();
}

std::unique_ptr<CommRequest> NcclCommunicator::ibroadcast(float* data, int64_t count,
                                                          int root_world_rank, int group) {
  if (!on_device(data)) return mpi_.ibroadcast(data, count, root_world_rank, group);
  WT_NCCL_CHECK(ncclBroadcast(data, data, static_cast<size_t>(count), ncclFloat,
                              group_root(group, root_world_rank), group_comm(group), stream_));
  return record(group_comm(group));
}

std::unique_ptr<CommRequest> NcclCommunicator::ibroadcast_words(uint32_t* data, int64_t count,
                                                                int root_world_rank, int group) {
  if (!on_device(data)) return mpi_.ibroadcast_words(data, count, root_world_rank, group);
  WT_NCCL_CHECK(ncclBroadcast(data, data, static_cast<size_t>(count), ncclUint32,
                              group_root(group, root_world_rank), group_comm(group), stream_));
  return record(group_comm(group));
}

std::unique_ptr<CommRequest> NcclCommunicator::ireduce_sum(float* data, int64_t count,
                                                           int root_world_rank, int group) {
  if (!on_device(data)) return mpi_.ireduce_sum(data, count, root_world_rank, group);
  // In place: the root's buffer receives the sum; the others' are left as they were.
  WT_NCCL_CHECK(ncclReduce(data, data, static_cast<size_t>(count), ncclFloat, ncclSum,
                           group_root(group, root_world_rank), group_comm(group), stream_));
  return record(group_comm(group));
}

// Host buffers (batches read from the file), over MPI.
void NcclCommunicator::scatter_bytes(const void* send, const std::vector<int64_t>& bytes_per_rank,
                                     void* recv, int root_world_rank) {
  mpi_.scatter_bytes(send, bytes_per_rank, recv, root_world_rank);
}

void NcclCommunicator::broadcast_bytes(void* data, int64_t bytes, int root_world_rank) {
  mpi_.broadcast_bytes(data, bytes, root_world_rank);
}

// NCCL has no tags: a pair's messages match in issue order, which the programs are validated for
// (sched/comm_rules.hpp, CommRules::Nccl).
std::unique_ptr<CommRequest> NcclCommunicator::isend(const float* data, int64_t count, int peer,
                                                     int tag) {
  if (!on_device(data)) return mpi_.isend(data, count, peer, tag);
  WT_NCCL_CHECK(
      ncclSend(data, static_cast<size_t>(count), ncclFloat, peer, group_comm(0), stream_));
  return record(group_comm(0));
}

std::unique_ptr<CommRequest> NcclCommunicator::irecv(float* data, int64_t count, int peer,
                                                     int tag) {
  if (!on_device(data)) return mpi_.irecv(data, count, peer, tag);
  WT_NCCL_CHECK(
      ncclRecv(data, static_cast<size_t>(count), ncclFloat, peer, group_comm(0), stream_));
  return record(group_comm(0));
}

void NcclCommunicator::barrier() { mpi_.barrier(); }

namespace cuda {

std::unique_ptr<Communicator> make_nccl_communicator(MPI_Comm world, int gpu) {
  return std::make_unique<NcclCommunicator>(world, gpu);
}

}  // namespace cuda

}  // namespace wt

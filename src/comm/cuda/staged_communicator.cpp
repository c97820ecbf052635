#include "comm/cuda/staged_communicator.hpp"

#include <functional>
#include <string>
#include <utility>

#include "comm/cuda/gpu_communicators.hpp"
#include "util/cuda_check.hpp"

namespace wt {

namespace {

bool on_device(const void* ptr) {
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, ptr) != cudaSuccess) {
    (void)cudaGetLastError();  // an unregistered host pointer, on older runtimes
    return false;
  }
  return attributes.type == cudaMemoryTypeDevice || attributes.type == cudaMemoryTypeManaged;
}

}  // namespace

class StagedCommunicator::Request final : public CommRequest {
 public:
  Request(StagedCommunicator& owner, std::unique_ptr<CommRequest> inner, void* data, void* pinned,
          size_t bytes, bool copy_back)
      : owner_(owner),
        inner_(std::move(inner)),
        data_(data),
        pinned_(pinned),
        bytes_(bytes),
        copy_back_(copy_back) {}
  ~Request() override {
    inner_.reset();  // MPI is done with the pinned buffer (or has abandoned it) first
    if (pinned_) owner_.give_pinned(pinned_, bytes_);
  }
  bool test() override {
    if (!pinned_) return true;
    if (!inner_->test()) return false;
    finish();
    return true;
  }
  void wait() override {
    if (!pinned_) return;
    inner_->wait();
    finish();
  }

 private:
  void finish() {
    if (copy_back_) WT_CUDA_CHECK(cudaMemcpy(data_, pinned_, bytes_, cudaMemcpyHostToDevice));
    owner_.give_pinned(pinned_, bytes_);
    pinned_ = nullptr;
  }
  StagedCommunicator& owner_;
  std::unique_ptr<CommRequest> inner_;
  void* data_;
  void* pinned_;
  size_t bytes_;
  bool copy_back_;
};

StagedCommunicator::StagedCommunicator(MPI_Comm world, int gpu) : mpi_(world) {
  WT_CUDA_CHECK(cudaSetDevice(gpu));
}

StagedCommunicator::~StagedCommunicator() {
  for (auto& [bytes, ptr] : pinned_) cudaFreeHost(ptr);
}

void* StagedCommunicator::take_pinned(size_t bytes) {
  auto it = pinned_.lower_bound(bytes);
  if (it != pinned_.end() && it->first == bytes) {
    void* ptr = it->second;
    pinned_.erase(it);
    return ptr;
  }
  void* ptr = nullptr;
  WT_CUDA_CHECK(cudaHostAlloc(&ptr, bytes == 0 ? 1 : bytes, cudaHostAllocDefault));
  return ptr;
}

void StagedCommunicator::give_pinned(void* ptr, size_t bytes) { pinned_.emplace(bytes, ptr); }

std::unique_ptr<CommRequest> StagedCommunicator::staged(
    void* data, size_t bytes, bool copy_in, bool copy_back,
    const std::function<std::unique_ptr<CommRequest>(void*)>& op) {
  if (!on_device(data)) return op(data);
  void* pinned = take_pinned(bytes);
  // The producing stream has reached this operation (the host started it after its event), so
  // a plain synchronous copy sees the data.
  if (copy_in) WT_CUDA_CHECK(cudaMemcpy(pinned, data, bytes, cudaMemcpyDeviceToHost));
  return std::make_unique<Request>(*this, op(pinned), data, pinned, bytes, copy_back);
}

std::unique_ptr<CommRequest> StagedCommunicator::iallreduce_sum(float* data, int64_t count,
                                                                int group) {
  return staged(data, size_t(count) * sizeof(float), true, true,
                [&](void* p) { return mpi_.iallreduce_sum(static_cast<float*>(p), count, group); });
}

void StagedCommunicator::allreduce_sum(float* data, int64_t count, int group) {
  iallreduce_sum(data, count, group)->wait();
}

void StagedCommunicator::broadcast(float* data, int64_t count, int root_world_rank, int group) {
  ibroadcast(data, count, root_world_rank, group)->wait();
}

std::unique_ptr<CommRequest> StagedCommunicator::ibroadcast(float* data, int64_t count,
                                                            int root_world_rank, int group) {
  const bool root = rank() == root_world_rank;
  return staged(data, size_t(count) * sizeof(float), root, !root, [&](void* p) {
    return mpi_.ibroadcast(static_cast<float*>(p), count, root_world_rank, group);
  });
}

std::unique_ptr<CommRequest> StagedCommunicator::ibroadcast_words(uint32_t* data, int64_t count,
                                                                  int root_world_rank, int group) {
  const bool root = rank() == root_world_rank;
  return staged(data, size_t(count) * sizeof(uint32_t), root, !root, [&](void* p) {
    return mpi_.ibroadcast_words(static_cast<uint32_t*>(p), count, root_world_rank, group);
  });
}

std::unique_ptr<CommRequest> StagedCommunicator::ireduce_sum(float* data, int64_t count,
                                                             int root_world_rank, int group) {
  const bool root = rank() == root_world_rank;  // only the root's data changes
  return staged(data, size_t(count) * sizeof(float), true, root, [&](void* p) {
    return mpi_.ireduce_sum(static_cast<float*>(p), count, root_world_rank, group);
  });
}

std::unique_ptr<CommRequest> StagedCommunicator::isend(const float* data, int64_t count, int peer,
                                                       int tag) {
  return staged(const_cast<float*>(data), size_t(count) * sizeof(float), true, false,
                [&](void* p) { return mpi_.isend(static_cast<float*>(p), count, peer, tag); });
}

std::unique_ptr<CommRequest> StagedCommunicator::irecv(float* data, int64_t count, int peer,
                                                       int tag) {
  return staged(data, size_t(count) * sizeof(float), false, true,
                [&](void* p) { return mpi_.irecv(static_cast<float*>(p), count, peer, tag); });
}

namespace cuda {

std::unique_ptr<Communicator> make_staged_communicator(MPI_Comm world, int gpu) {
  return std::make_unique<StagedCommunicator>(world, gpu);
}

}  // namespace cuda

}  // namespace wt

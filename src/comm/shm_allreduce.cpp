#include "comm/shm_allreduce.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "comm/shared_window.hpp"
#include "util/mpi_check.hpp"
#include "util/unwinding.hpp"

namespace wt {

namespace {
constexpr int kMaxRanks = 64;
}  // namespace

std::unique_ptr<ShmAllreduce> ShmAllreduce::create(MPI_Comm comm) {
  int size = 0, node_size = 0;
  MPI_Comm_size(comm, &size);
  MPI_Comm node;
  WT_MPI_CHECK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
  MPI_Comm_size(node, &node_size);
  MPI_Comm_free(&node);
  // Every rank computes the same answer: node_size == size holds on all ranks or on none.
  if (size < 2 || size > kMaxRanks || node_size != size) return nullptr;
  return std::unique_ptr<ShmAllreduce>(new ShmAllreduce(comm));
}

ShmAllreduce::ShmAllreduce(MPI_Comm comm) {
  WT_MPI_CHECK(MPI_Comm_dup(comm, &comm_));
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
}

ShmAllreduce::~ShmAllreduce() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized || exception_unwinding()) return;  // collective: util/unwinding.hpp
  free_shared_window(win_);
  MPI_Comm_free(&comm_);
}

float* ShmAllreduce::segment(int buffer, int rank) const {
  return base_[rank] + int64_t(buffer) * capacity_;
}

bool ShmAllreduce::reserve(int64_t count) {
  if (unusable_) return false;
  if (count <= capacity_) return true;
  const int64_t capacity = std::max<int64_t>(count, 1024);
  if (!shared_window_fits(comm_, double(size_) * 2.0 * double(capacity) * sizeof(float))) {
    unusable_ = true;
    return false;
  }
  free_shared_window(win_);
  capacity_ = capacity;
  float* mine = nullptr;
  WT_MPI_CHECK(MPI_Win_allocate_shared(MPI_Aint(2 * capacity_ * int64_t(sizeof(float))),
                                       sizeof(float), MPI_INFO_NULL, comm_, &mine, &win_));
  for (int r = 0; r < size_; ++r) {
    MPI_Aint bytes = 0;
    int disp = 0;
    WT_MPI_CHECK(MPI_Win_shared_query(win_, r, &bytes, &disp, &base_[r]));
  }
  WT_MPI_CHECK(MPI_Win_lock_all(MPI_MODE_NOCHECK, win_));
  next_buffer_ = 0;
  return true;
}

bool ShmAllreduce::sum(float* data, int64_t count) {
  if (!reserve(count)) return false;
  const int b = next_buffer_;
  next_buffer_ ^= 1;
  auto slice_begin = [&](int r) { return count * r / size_; };
  auto sync = [&] {
    MPI_Win_sync(win_);  // our stores visible before the barrier, theirs after it
    MPI_Barrier(comm_);
    MPI_Win_sync(win_);
  };
  // 1. Publish every slice but our own (the others sum those).
  float* mine = segment(b, rank_);
  for (int r = 0; r < size_; ++r)
    if (r != rank_)
      std::memcpy(mine + slice_begin(r), data + slice_begin(r),
                  size_t(slice_begin(r + 1) - slice_begin(r)) * sizeof(float));
  sync();
  // 2. Sum our slice in rank order and publish it.
  const int64_t lo = slice_begin(rank_), hi = slice_begin(rank_ + 1);
  float* __restrict out = mine + lo;
  for (int64_t i = lo; i < hi; ++i) out[i - lo] = 0.0f;
  for (int r = 0; r < size_; ++r) {
    const float* __restrict in = r == rank_ ? data + lo : segment(b, r) + lo;
    for (int64_t i = 0; i < hi - lo; ++i) out[i] += in[i];
  }
  std::memcpy(data + lo, out, size_t(hi - lo) * sizeof(float));
  sync();
  // 3. Gather the other slices. The next call writes the other buffer, and its first barrier
  // waits for everyone to finish reading this one, so no third barrier is needed.
  for (int r = 0; r < size_; ++r)
    if (r != rank_)
      std::memcpy(data + slice_begin(r), segment(b, r) + slice_begin(r),
                  size_t(slice_begin(r + 1) - slice_begin(r)) * sizeof(float));
  return true;
}

}  // namespace wt

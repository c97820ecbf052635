#pragma once
// Sum-allreduce of floats through one MPI-3 shared-memory window, for a communicator whose ranks
// all share one node. Open MPI's allreduce over shared memory copies every byte through the
// transport's fragment FIFOs (~115 us for mlp's 1 MB of gradients on 2 ranks); here each rank
// publishes the others' slices of its buffer, sums its own slice straight from their windows and
// publishes the result: two barriers and ~2 buffer-sizes of memory traffic per rank.
// Every rank of the sum gets bit-identical values (each slice is summed once, in rank order).
#include <mpi.h>

#include <cstdint>
#include <memory>

namespace wt {

class ShmAllreduce {
 public:
  // Collective over `comm`. Returns null unless every rank of `comm` is on this node (and there
  // are 2 to 64 of them).
  static std::unique_ptr<ShmAllreduce> create(MPI_Comm comm);
  ~ShmAllreduce();
  ShmAllreduce(const ShmAllreduce&) = delete;
  ShmAllreduce& operator=(const ShmAllreduce&) = delete;

  // Collective: every rank passes the same count. In place, like MPI_IN_PLACE. Returns false,
  // on every rank alike and without summing, when the window cannot be had: its backing file
  // in /dev/shm would pass some rank's file size limit (ulimit -f), which would otherwise end
  // the job inside MPI_Win_allocate_shared. The caller then sums through MPI instead.
  bool sum(float* data, int64_t count);

 private:
  explicit ShmAllreduce(MPI_Comm comm);
  bool reserve(int64_t count);  // collective: (re)allocates the window for `count` floats
  float* segment(int buffer, int rank) const;

  MPI_Comm comm_ = MPI_COMM_NULL;  // our duplicate
  int rank_ = 0, size_ = 1;
  MPI_Win win_ = MPI_WIN_NULL;
  int64_t capacity_ = 0;   // floats per rank per buffer
  float* base_[64] = {};   // each rank's segment start (ranks beyond 64 never take this path)
  int next_buffer_ = 0;    // two buffers alternate, so no barrier is needed after the last read
  bool unusable_ = false;  // a file size limit keeps the window out: MPI sums instead
};

}  // namespace wt

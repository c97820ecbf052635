#pragma once
// The communication interface every schedule's instructions are executed against. MPI on the
// host; NCCL (bootstrapped over MPI) between GPUs. Groups are registered once (the schedule's
// rank groups) and referred to by id; group 0 is always the whole world.
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "util/async_operation.hpp"

namespace wt {

// A collective or point-to-point operation in flight (test() drives progress).
class CommRequest : public AsyncOperation {};

// Collective work done outside this interface that the stall watchdog must still watch as if it
// were one collective call: parallel HDF5 and MPI-IO calls on the raw MPI communicator; a
// whole-step graph's NCCL calls, which the host waits for in the step's one synchronisation.
enum class CommRegion { CheckpointWrite, GraphedStep };

// Held for the duration of such a region (Communicator::watch_region); ends it when destroyed.
class RegionMark {
 public:
  virtual ~RegionMark() = default;
};

// A request that finished when it was made.
class CompletedRequest : public CommRequest {
 public:
  bool test() override { return true; }
  void wait() override {}
};

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;

  // Registers a group of world ranks (every rank calls it with the same list, in the same order).
  // Returns its id. Ranks outside the group get an id too but must not use it.
  virtual int add_group(const std::vector<int>& world_ranks) = 0;

  // Sum in place over the group, without blocking.
  virtual std::unique_ptr<CommRequest> iallreduce_sum(float* data, int64_t count, int group) = 0;
  virtual void allreduce_sum(float* data, int64_t count, int group) = 0;
  virtual void allreduce_sum(double* data, int64_t count, int group) = 0;
  virtual void broadcast(float* data, int64_t count, int root_world_rank, int group) = 0;
  virtual void broadcast_bytes(void* data, int64_t bytes, int root_world_rank) = 0;
  virtual std::unique_ptr<CommRequest> isend(const float* data, int64_t count, int peer,
                                             int tag) = 0;
  virtual std::unique_ptr<CommRequest> irecv(float* data, int64_t count, int peer, int tag) = 0;
  virtual void barrier() = 0;

  // Non-blocking broadcast from root and sum onto root (in place on the root; other ranks' data
  // is left as it was) over a group. The defaults block and return a finished request, for
  // backends without non-blocking collectives.
  virtual std::unique_ptr<CommRequest> ibroadcast(float* data, int64_t count, int root_world_rank,
                                                  int group);
  virtual std::unique_ptr<CommRequest> ireduce_sum(float* data, int64_t count, int root_world_rank,
                                                   int group);
  // Blocking scatter over the world: the root sends bytes_per_rank[r] bytes of `send` (in rank
  // order) to rank r, which receives them into `recv` (ScaleDNN's master data path).
  virtual void scatter_bytes(const void* send, const std::vector<int64_t>& bytes_per_rank,
                             void* recv, int root_world_rank);
  // Broadcast of 32-bit words (encoded weights: bit patterns, never floats).
  virtual std::unique_ptr<CommRequest> ibroadcast_words(uint32_t* data, int64_t count,
                                                        int root_world_rank, int group);
  // Marks this rank as inside `region` until the returned mark is destroyed: every rank enters
  // it at the same point, like a collective. A no-op unless the communicator is watched.
  virtual std::unique_ptr<RegionMark> watch_region(CommRegion) {
    return std::make_unique<RegionMark>();
  }
  // The communicator a decorator (WatchedCommunicator) forwards to; itself for a real one. Code
  // that needs the concrete backend (the MPI_Comm, say) looks through decorators with this.
  virtual Communicator& underlying() { return *this; }
  // The device stream (a cudaStream_t) that operations on device buffers are enqueued on, to be
  // ordered there by events (NCCL); nullptr where the host drives them (MPI).
  virtual void* native_stream() { return nullptr; }
};

inline std::unique_ptr<CommRequest> Communicator::ibroadcast(float* data, int64_t count,
                                                             int root_world_rank, int group) {
  broadcast(data, count, root_world_rank, group);
  return std::make_unique<CompletedRequest>();
}

inline void Communicator::scatter_bytes(const void*, const std::vector<int64_t>&, void*, int) {
  throw std::logic_error("this communicator has no scatter");
}

inline std::unique_ptr<CommRequest> Communicator::ibroadcast_words(uint32_t*, int64_t, int, int) {
  throw std::logic_error("this communicator has no word broadcast");
}

inline std::unique_ptr<CommRequest> Communicator::ireduce_sum(float*, int64_t, int, int) {
  throw std::logic_error("this communicator has no reduce-to-root");
}

// Collective over the world: `text` from world rank `root` on every rank (its length, then its
// bytes).
inline void broadcast_text(Communicator& comm, std::string& text, int root) {
  int64_t bytes = int64_t(text.size());
  comm.broadcast_bytes(&bytes, sizeof bytes, root);
  text.resize(size_t(bytes));
  if (bytes > 0) comm.broadcast_bytes(text.data(), bytes, root);
}

}  // namespace wt

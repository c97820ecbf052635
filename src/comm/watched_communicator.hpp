#pragma once
// A Communicator decorator that publishes on the HeartbeatBoard when this rank is inside a
// communication call: every blocking call is marked from entry to return, every request from its
// start until test() reports it complete, wait() returns or it is destroyed. With several
// requests outstanding the oldest is published, since it is the one that has waited longest.
// The stall watchdog reads the board; nothing here blocks or adds an MPI call.
#include <mutex>
#include <vector>

#include "comm/communicator.hpp"
#include "comm/heartbeat_board.hpp"

namespace wt {

class WatchedCommunicator : public Communicator {
 public:
  WatchedCommunicator(Communicator& inner, HeartbeatBoard& board);

  // The training loop calls this at the start of every step (progress + the step number).
  void set_step(int64_t step) { board_.set_step(step); }
  // World ranks of a group (any thread; empty if unknown).
  std::vector<int> group_members(int group) const;

  int rank() const override { return inner_.rank(); }
  int size() const override { return inner_.size(); }
  int add_group(const std::vector<int>& world_ranks) override;
  std::unique_ptr<CommRequest> iallreduce_sum(float* data, int64_t count, int group) override;
  void allreduce_sum(float* data, int64_t count, int group) override;
  void allreduce_sum(double* data, int64_t count, int group) override;
  void broadcast(float* data, int64_t count, int root_world_rank, int group) override;
  void broadcast_bytes(void* data, int64_t bytes, int root_world_rank) override;
  std::unique_ptr<CommRequest> isend(const float* data, int64_t count, int peer, int tag) override;
  std::unique_ptr<CommRequest> irecv(float* data, int64_t count, int peer, int tag) override;
  void scatter_bytes(const void* send, const std::vector<int64_t>& bytes_per_rank, void* recv,
                     int root_world_rank) override;
  std::unique_ptr<CommRequest> ibroadcast_words(uint32_t* data, int64_t count, int root_world_rank,
                                                int group) override;
  std::unique_ptr<CommRequest> ibroadcast(float* data, int64_t count, int root_world_rank,
                                          int group) override;
  std::unique_ptr<CommRequest> ireduce_sum(float* data, int64_t count, int root_world_rank,
                                           int group) override;
  void barrier() override;
  // Publishes the region like a collective on the world (group 0) from now until the mark goes.
  std::unique_ptr<RegionMark> watch_region(CommRegion region) override;
  Communicator& underlying() override { return inner_.underlying(); }
  void* native_stream() override { return inner_.native_stream(); }

 private:
  class Request;
  class Region;
  struct Outstanding {
    int64_t token;
    CommOp op;
    int64_t group;
    int64_t seq;
    int64_t since_ns;
  };
  // Marks an operation as started; returns its token for finish().
  int64_t start(CommOp op, int64_t group);
  void finish(int64_t token);
  void publish();

  Communicator& inner_;
  HeartbeatBoard& board_;
  std::vector<Outstanding> outstanding_;  // main thread only
  std::vector<int64_t> collectives_;      // per group: collectives entered so far
  int64_t next_token_ = 0;
  mutable std::mutex groups_mutex_;  // the watchdog reads groups_ while main may add one
  std::vector<std::vector<int>> groups_;
};

}  // namespace wt

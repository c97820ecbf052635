#pragma once
// A table in node-shared memory where each rank publishes what its main thread is doing: the
// training step, whether it is inside a communication call (which one, on which group, since
// when) and when it last made progress; its watchdog thread adds a liveness tick. Any rank's
// watchdog can read every slot of its node without an MPI call, which is what lets it name the
// rank a collective is waiting for even when MPI itself is stuck.
//
// Node-local by design: ranks on other nodes have no slot here and are reported as "not on this
// node" (their own watchdogs see their own waits).
#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace wt {

enum class CommOp : int64_t {
  None = 0,  // computing
  Allreduce,
  Iallreduce,
  Broadcast,
  Barrier,
  Send,
  Recv,
  CheckpointWrite,  // a marked region (Communicator::watch_region): HDF5/MPI-IO collectives
  GraphedStep,      // a marked region: a graphed step's collectives, inside its synchronisation
};
const char* comm_op_name(CommOp op);

// Nanoseconds on CLOCK_MONOTONIC, the same clock for every process of a node.
int64_t monotonic_ns();

// A consistent copy of one rank's slot.
struct Heartbeat {
  int world_rank = -1;
  int pid = 0;
  int64_t step = -1;
  int64_t progress_ns = 0;  // last step start or completed communication call
  CommOp op = CommOp::None;
  int64_t group = 0;      // group id, or the peer's world rank for Send/Recv
  int64_t seq = 0;        // per group: how many collectives this rank has entered on it
  int64_t since_ns = 0;   // when it entered `op`
  int64_t alive_ns = 0;   // the watchdog thread's last tick
  bool finished = false;  // left training normally: its process may end without alarm
  bool failed = false;    // hit an error it is reporting; it ends the whole job itself
};

class HeartbeatBoard {
 public:
  // Collective over `world` (main thread, at startup).
  explicit HeartbeatBoard(MPI_Comm world);
  // Collective too (frees the window): only after every rank has left its training loop.
  ~HeartbeatBoard();
  HeartbeatBoard(const HeartbeatBoard&) = delete;
  HeartbeatBoard& operator=(const HeartbeatBoard&) = delete;

  // Writers for this rank's slot. The main thread calls these; the watchdog thread only tick().
  void set_step(int64_t step);
  void enter(CommOp op, int64_t group, int64_t seq, int64_t since_ns);
  void leave();  // back to computing; counts as progress
  void tick();   // watchdog liveness
  void mark_finished();
  // This rank is ending the job over its own error (app/job_failure.hpp): the node's watchdogs
  // stay silent rather than report a second, wrong diagnosis of it.
  void mark_failed();

  // Readers (any thread).
  Heartbeat own() const { return read(local_rank_); }
  // The host name of any world rank (gathered at construction), for reports on ranks that have
  // no slot here.
  const std::string& host(int world_rank) const { return hosts_.at(size_t(world_rank)); }
  // The slot of `world_rank` if it runs on this node.
  bool find(int world_rank, Heartbeat* out) const;
  // Every slot of this node, by node-local index.
  int local_size() const { return local_size_; }
  int local_rank() const { return local_rank_; }
  Heartbeat local(int index) const { return read(index); }

 private:
  struct Slot;
  Heartbeat read(int local) const;
  void gather_hosts(MPI_Comm world);
  template <typename F>
  void write(F&& update);

  MPI_Comm node_ = MPI_COMM_NULL;
  MPI_Win win_ = MPI_WIN_NULL;
  Slot* slots_ = nullptr;
  int local_rank_ = 0, local_size_ = 1;
  std::vector<std::string> hosts_;  // by world rank
};

}  // namespace wt

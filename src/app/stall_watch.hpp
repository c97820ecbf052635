#pragma once
// The stall detector as main() wires it: a heartbeat board shared by the ranks of a node, the
// communicator decorator that marks every communication call on it, and the watchdog thread.
// With failure.stall_seconds = 0 it is off and comm() is the plain communicator. The board lives on
// the MPI world; the communicator watched is the one training uses (MPI, or a GPU rank's NCCL).
#include <memory>

#include "app/exit_status_file.hpp"
#include "comm/heartbeat_board.hpp"
#include "comm/mpi_communicator.hpp"
#include "comm/stall_watchdog.hpp"
#include "comm/watched_communicator.hpp"

namespace wt {

class StallWatch {
 public:
  // Collective over mpi's world when stall_seconds > 0 (main thread, before training).
  StallWatch(MpiCommunicator& mpi, Communicator& training, double stall_seconds)
      : training_(training) {
    if (stall_seconds <= 0) return;
    board_ = std::make_unique<HeartbeatBoard>(mpi.world());
    watched_ = std::make_unique<WatchedCommunicator>(training, *board_);
    // Rank 0 records the watchdog's status for the job script too (a job script resumes a run
    // whose rank stalled or died from its last checkpoint).
    const bool records = mpi.rank() == 0;
    watchdog_ = std::make_unique<StallWatchdog>(*board_, *watched_, stall_seconds, [records] {
      if (records) record_exit_status(StallWatchdog::kExitStatus);
    });
  }

  // Training is over on this rank (normally or by an exception every rank shares): its process
  // may now end without the other ranks' watchdogs taking that for a crash.
  ~StallWatch() {
    if (board_) board_->mark_finished();
  }

  HeartbeatBoard* board() { return board_.get(); }  // nullptr when off
  Communicator& comm() { return watched_ ? static_cast<Communicator&>(*watched_) : training_; }
  // The training loop's progress: the step about to run.
  void set_step(int64_t step) {
    if (watched_) watched_->set_step(step);
  }

 private:
  Communicator& training_;
  // Destroyed in reverse: the watchdog stops before what it reads goes away.
  std::unique_ptr<HeartbeatBoard> board_;
  std::unique_ptr<WatchedCommunicator> watched_;
  std::unique_ptr<StallWatchdog> watchdog_;
};

}  // namespace wt

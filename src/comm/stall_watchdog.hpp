#pragma once
// A per-rank thread that ends the process (1) as soon as the process of another rank on this node
// has ended without finishing training (killed, crashed: whatever this rank waits in next, even
// collective file I/O that is not a marked call, would wait for ever), or (2) when this rank has
// waited in one communication call
// longer than failure.stall_seconds: it prints one line naming this rank, what it waits in, and
// the late rank(s) with their last step and progress ("process gone" when the process no longer
// exists, "not responding" when its own watchdog stopped ticking, i.e. it is stopped or frozen),
// then _exit(5); the launcher (mpirun, srun) then ends the job. It makes no MPI call (MPI runs
// with MPI_THREAD_FUNNELED), only reads the HeartbeatBoard and calls kill(pid, 0).
#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "comm/heartbeat_board.hpp"
#include "comm/watched_communicator.hpp"

namespace wt {

class StallWatchdog {
 public:
  static constexpr int kExitStatus = 5;

  // `before_exit`, if given, runs after the report and before _exit (e.g. to record the status).
  StallWatchdog(HeartbeatBoard& board, const WatchedCommunicator& comm, double stall_seconds,
                std::function<void()> before_exit = {});
  ~StallWatchdog();  // stops and joins the thread
  StallWatchdog(const StallWatchdog&) = delete;
  StallWatchdog& operator=(const StallWatchdog&) = delete;

  // The report the watchdog would print if this rank's current wait had gone on too long
  // (exposed for tests). `now_ns` is monotonic_ns().
  std::string describe_stall(const Heartbeat& self, int64_t now_ns) const;
  // The report for (1) if a node-local peer's process has gone without finishing, else "".
  std::string describe_lost_peer(int64_t now_ns) const;

 private:
  void run();
  bool any_rank_failed() const;
  [[noreturn]] void stop(const std::string& report);

  HeartbeatBoard& board_;
  const WatchedCommunicator& comm_;
  const std::function<void()> before_exit_;
  const int64_t stall_ns_;
  const int64_t tick_ns_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace wt

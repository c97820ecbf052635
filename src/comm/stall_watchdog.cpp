#include "comm/stall_watchdog.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <utility>

namespace wt {

namespace {

double seconds(int64_t ns) { return double(ns) * 1e-9; }

std::string format(const char* fmt, double a) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, a);
  return buf;
}

std::string where(const Heartbeat& h) {
  std::string s = comm_op_name(h.op);
  if (h.op == CommOp::Send || h.op == CommOp::Recv)
    s += " (peer rank " + std::to_string(h.group) + ")";
  else if (h.op != CommOp::None)
    s += " (group " + std::to_string(h.group) + ", collective #" + std::to_string(h.seq) + ")";
  return s;
}

}  // namespace

StallWatchdog::StallWatchdog(HeartbeatBoard& board, const WatchedCommunicator& comm,
                             double stall_seconds, std::function<void()> before_exit)
    : board_(board),
      comm_(comm),
      before_exit_(std::move(before_exit)),
      stall_ns_(int64_t(stall_seconds * 1e9)),
      // Ticks often enough that the report comes soon after the bound, and that a peer's missing
      // ticks show within a second or two.
      tick_ns_(std::clamp<int64_t>(stall_ns_ / 10, 50'000'000, 500'000'000)) {
  board_.tick();
  thread_ = std::thread([this] { run(); });
}

StallWatchdog::~StallWatchdog() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

std::string StallWatchdog::describe_stall(const Heartbeat& self, int64_t now) const {
  std::string line = "wavetrain: rank " + std::to_string(self.world_rank) + ": stalled: waited " +
                     format("%.1f", seconds(now - self.since_ns)) + " s in " + where(self) +
                     " at step " + std::to_string(self.step + 1);
  std::vector<int> peers;
  if (self.op == CommOp::Send || self.op == CommOp::Recv)
    peers.push_back(int(self.group));
  else
    peers = comm_.group_members(int(self.group));
  // A peer whose watchdog has not ticked for several periods is stopped or frozen.
  const int64_t stale_ns = std::max<int64_t>(4 * tick_ns_, 1'500'000'000);
  std::string late, joined;
  for (int r : peers) {
    if (r == self.world_rank) continue;
    Heartbeat h;
    if (!board_.find(r, &h)) {
      late += "; rank " + std::to_string(r) + " on " + board_.host(r) +
              ": not on this node (its own watchdog reports it)";
      continue;
    }
    const std::string progress = "last progress at step " + std::to_string(h.step + 1) + ", " +
                                 format("%.1f", seconds(now - h.progress_ns)) + " s ago";
    const std::string id = "rank " + std::to_string(r) + " (pid " + std::to_string(h.pid) + ")";
    if (::kill(h.pid, 0) != 0 && errno == ESRCH) {
      late += "; " + id + ": process gone, " + progress;
    } else if (now - h.alive_ns > stale_ns) {
      late += "; " + id + ": not responding for " + format("%.1f", seconds(now - h.alive_ns)) +
              " s (stopped or frozen), in " + where(h) + ", " + progress;
    } else if (h.op == self.op && h.group == self.group && h.seq == self.seq &&
               self.op != CommOp::Send && self.op != CommOp::Recv) {
      joined += (joined.empty() ? "" : ", ") + std::to_string(r);
    } else {
      late += "; " + id + ": in " + where(h) + ", " + progress;
    }
  }
  if (late.empty())
    line += "; no rank on this node is late (ranks " + joined +
            " wait in the same call): a lost message or a fault below MPI";
  else
    line += "; late: " + late.substr(2);
  return line;
}

std::string StallWatchdog::describe_lost_peer(int64_t now) const {
  const Heartbeat self = board_.own();
  for (int i = 0; i < board_.local_size(); ++i) {
    if (i == board_.local_rank()) continue;
    const Heartbeat h = board_.local(i);
    if (h.finished || h.pid <= 0 || ::kill(h.pid, 0) == 0 || errno != ESRCH) continue;
    return "wavetrain: rank " + std::to_string(self.world_rank) + ": rank " +
           std::to_string(h.world_rank) + " (pid " + std::to_string(h.pid) +
           ") is gone: its process ended without finishing (killed or crashed), in " + where(h) +
           ", last progress at step " + std::to_string(h.step + 1) + ", " +
           format("%.1f", seconds(now - h.progress_ns)) + " s ago; this rank was at step " +
           std::to_string(self.step + 1) + " in " + where(self);
  }
  return "";
}

bool StallWatchdog::any_rank_failed() const {
  for (int i = 0; i < board_.local_size(); ++i)
    if (board_.local(i).failed) return true;
  return false;
}

void StallWatchdog::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  int64_t last_tick = monotonic_ns();
  int64_t resumed = 0;  // when this process last came back from being stopped
  while (!stop_) {
    wake_.wait_for(lock, std::chrono::nanoseconds(tick_ns_));
    if (stop_) break;
    board_.tick();
    const Heartbeat self = board_.own();
    const int64_t now = monotonic_ns();
    // A long gap between our own ticks means this process was the stopped one (SIGSTOP, a
    // debugger, a frozen VM): the time it spent stopped is not time its peers kept it waiting.
    if (now - last_tick > 4 * tick_ns_) resumed = now;
    last_tick = now;
    // A rank of this node is ending the job over its own error: that report is the true one.
    if (any_rank_failed()) continue;
    const std::string lost = describe_lost_peer(now);
    if (!lost.empty()) stop(lost);
    if (self.op == CommOp::None || now - std::max(self.since_ns, resumed) <= stall_ns_) continue;
    stop(describe_stall(self, now));
  }
}

void StallWatchdog::stop(const std::string& report) {
  const std::string line = report + "; stopping (exit status 5)\n";
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
  if (before_exit_) before_exit_();
  // No unwinding, no MPI_Finalize (the peer it would wait for is the problem).
  ::_exit(kExitStatus);
}

}  // namespace wt

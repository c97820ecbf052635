#include "comm/heartbeat_board.hpp"

#include <unistd.h>

#include <chrono>
#include <cstring>
#include <new>
#include <stdexcept>

#include "util/unwinding.hpp"

namespace wt {

// Every field is an atomic so the watchdog thread and other processes may read while the owner
// writes; `version` is a sequence lock (odd while a write is in progress) that makes a read of
// several fields consistent.
struct HeartbeatBoard::Slot {
  std::atomic<int64_t> version{0};
  std::atomic<int64_t> world_rank{-1};
  std::atomic<int64_t> pid{0};
  std::atomic<int64_t> step{-1};
  std::atomic<int64_t> progress_ns{0};
  std::atomic<int64_t> op{0};
  std::atomic<int64_t> group{0};
  std::atomic<int64_t> seq{0};
  std::atomic<int64_t> since_ns{0};
  std::atomic<int64_t> alive_ns{0};  // outside the sequence lock: written by the watchdog
  std::atomic<int64_t> finished{0};  // 1 finished, 2 failed
};
static_assert(std::atomic<int64_t>::is_always_lock_free,
              "cross-process atomics need lock-free 64-bit integers");

const char* comm_op_name(CommOp op) {
  switch (op) {
    case CommOp::None:
      return "compute";
    case CommOp::Allreduce:
      return "allreduce";
    case CommOp::Iallreduce:
      return "non-blocking allreduce";
    case CommOp::Broadcast:
      return "broadcast";
    case CommOp::Barrier:
      return "barrier";
    case CommOp::Send:
      return "send";
    case CommOp::Recv:
      return "receive";
    case CommOp::CheckpointWrite:
      return "checkpoint write";
    case CommOp::GraphedStep:
      return "graphed step's collectives";
  }
  return "?";
}

int64_t monotonic_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

HeartbeatBoard::HeartbeatBoard(MPI_Comm world) {
  int world_rank = 0;
  MPI_Comm_rank(world, &world_rank);
  if (MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, world_rank, MPI_INFO_NULL, &node_) !=
      MPI_SUCCESS)
    throw std::runtime_error("heartbeat board: MPI_Comm_split_type failed");
  MPI_Comm_rank(node_, &local_rank_);
  MPI_Comm_size(node_, &local_size_);
  // One contiguous block owned by node rank 0; the others map it.
  const MPI_Aint bytes = local_rank_ == 0 ? MPI_Aint(sizeof(Slot)) * local_size_ : 0;
  void* base = nullptr;
  if (MPI_Win_allocate_shared(bytes, 1, MPI_INFO_NULL, node_, &base, &win_) != MPI_SUCCESS)
    throw std::runtime_error("heartbeat board: MPI_Win_allocate_shared failed");
  MPI_Aint size = 0;
  int disp = 0;
  MPI_Win_shared_query(win_, 0, &size, &disp, &base);
  slots_ = static_cast<Slot*>(base);
  Slot* mine = new (&slots_[local_rank_]) Slot();
  const int64_t now = monotonic_ns();
  mine->world_rank.store(world_rank);
  mine->pid.store(::getpid());
  mine->progress_ns.store(now);
  mine->alive_ns.store(now);
  MPI_Barrier(node_);  // every slot is initialised before anyone reads it
  gather_hosts(world);
}

// Every rank's host name, so that a report on a rank of another node can say where it runs.
void HeartbeatBoard::gather_hosts(MPI_Comm world) {
  constexpr int kLength = 256;
  int world_size = 1;
  MPI_Comm_size(world, &world_size);
  char mine[kLength] = {};
  if (::gethostname(mine, kLength - 1) != 0) std::strcpy(mine, "unknown host");
  std::vector<char> all(size_t(world_size) * kLength);
  if (MPI_Allgather(mine, kLength, MPI_CHAR, all.data(), kLength, MPI_CHAR, world) != MPI_SUCCESS)
    throw std::runtime_error("heartbeat board: MPI_Allgather of host names failed");
  for (int r = 0; r < world_size; ++r) hosts_.emplace_back(&all[size_t(r) * kLength]);
}

HeartbeatBoard::~HeartbeatBoard() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized || exception_unwinding()) return;  // collective: util/unwinding.hpp
  if (win_ != MPI_WIN_NULL) MPI_Win_free(&win_);
  if (node_ != MPI_COMM_NULL) MPI_Comm_free(&node_);
}

template <typename F>
void HeartbeatBoard::write(F&& update) {
  Slot& s = slots_[local_rank_];
  const int64_t v = s.version.load(std::memory_order_relaxed);
  s.version.store(v + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  update(s);
  s.version.store(v + 2, std::memory_order_release);
}

void HeartbeatBoard::set_step(int64_t step) {
  const int64_t now = monotonic_ns();
  write([&](Slot& s) {
    s.step.store(step, std::memory_order_relaxed);
    s.progress_ns.store(now, std::memory_order_relaxed);
  });
}

void HeartbeatBoard::enter(CommOp op, int64_t group, int64_t seq, int64_t since_ns) {
  write([&](Slot& s) {
    s.op.store(int64_t(op), std::memory_order_relaxed);
    s.group.store(group, std::memory_order_relaxed);
    s.seq.store(seq, std::memory_order_relaxed);
    s.since_ns.store(since_ns, std::memory_order_relaxed);
  });
}

void HeartbeatBoard::leave() {
  const int64_t now = monotonic_ns();
  write([&](Slot& s) {
    s.op.store(int64_t(CommOp::None), std::memory_order_relaxed);
    s.progress_ns.store(now, std::memory_order_relaxed);
  });
}

void HeartbeatBoard::tick() {
  slots_[local_rank_].alive_ns.store(monotonic_ns(), std::memory_order_relaxed);
}

void HeartbeatBoard::mark_failed() {
  slots_[local_rank_].finished.store(2, std::memory_order_release);
}

void HeartbeatBoard::mark_finished() {
  slots_[local_rank_].finished.store(1, std::memory_order_release);
}

Heartbeat HeartbeatBoard::read(int local) const {
  const Slot& s = slots_[local];
  Heartbeat h;
  // A writer that died mid-write leaves the version odd forever: give up after a while and
  // take the fields as they are rather than spin.
  for (int attempt = 0; attempt < 10000; ++attempt) {
    const int64_t v0 = s.version.load(std::memory_order_acquire);
    h.world_rank = int(s.world_rank.load(std::memory_order_relaxed));
    h.pid = int(s.pid.load(std::memory_order_relaxed));
    h.step = s.step.load(std::memory_order_relaxed);
    h.progress_ns = s.progress_ns.load(std::memory_order_relaxed);
    h.op = CommOp(s.op.load(std::memory_order_relaxed));
    h.group = s.group.load(std::memory_order_relaxed);
    h.seq = s.seq.load(std::memory_order_relaxed);
    h.since_ns = s.since_ns.load(std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_acquire);
    if ((v0 & 1) == 0 && s.version.load(std::memory_order_relaxed) == v0) break;
  }
  h.alive_ns = s.alive_ns.load(std::memory_order_relaxed);
  const int64_t finished = s.finished.load(std::memory_order_acquire);
  h.finished = finished != 0;
  h.failed = finished == 2;
  return h;
}

bool HeartbeatBoard::find(int world_rank, Heartbeat* out) const {
  for (int i = 0; i < local_size_; ++i) {
    if (slots_[i].world_rank.load(std::memory_order_relaxed) != world_rank) continue;
    *out = read(i);
    return true;
  }
  return false;
}

}  // namespace wt

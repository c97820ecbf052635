#include "comm/watched_communicator.hpp"

#include <algorithm>
#include <numeric>

namespace wt {

// Wraps a request so its completion clears the mark, however the caller completes it.
class WatchedCommunicator::Request : public CommRequest {
 public:
  Request(WatchedCommunicator& owner, int64_t token, std::unique_ptr<CommRequest> inner)
      : owner_(owner), token_(token), inner_(std::move(inner)) {}
  ~Request() override {
    inner_.reset();  // an MPI request's destructor waits for it: still marked until it returns
    if (!finished_) owner_.finish(token_);
  }
  bool test() override {
    if (finished_) return true;
    if (!inner_->test()) return false;
    done();
    return true;
  }
  void wait() override {
    if (finished_) return;
    inner_->wait();
    done();
  }

 private:
  void done() {
    finished_ = true;
    owner_.finish(token_);
  }
  WatchedCommunicator& owner_;
  int64_t token_;
  std::unique_ptr<CommRequest> inner_;
  bool finished_ = false;
};

class WatchedCommunicator::Region : public RegionMark {
 public:
  Region(WatchedCommunicator& owner, int64_t token) : owner_(owner), token_(token) {}
  ~Region() override { owner_.finish(token_); }

 private:
  WatchedCommunicator& owner_;
  int64_t token_;
};

namespace {
// Marks a blocking call for the duration of a scope.
struct Mark {
  Mark(WatchedCommunicator* c, int64_t token, void (WatchedCommunicator::*finish)(int64_t))
      : comm(c), token(token), finish(finish) {}
  ~Mark() { (comm->*finish)(token); }
  WatchedCommunicator* comm;
  int64_t token;
  void (WatchedCommunicator::*finish)(int64_t);
};
}  // namespace

WatchedCommunicator::WatchedCommunicator(Communicator& inner, HeartbeatBoard& board)
    : inner_(inner), board_(board) {
  std::vector<int> world(inner_.size());
  std::iota(world.begin(), world.end(), 0);
  groups_.push_back(world);
  collectives_.push_back(0);
}

std::vector<int> WatchedCommunicator::group_members(int group) const {
  std::lock_guard<std::mutex> lock(groups_mutex_);
  if (group < 0 || group >= int(groups_.size())) return {};
  return groups_[group];
}

int WatchedCommunicator::add_group(const std::vector<int>& world_ranks) {
  // Creating a group is itself collective over the world.
  const int64_t token = start(CommOp::Barrier, 0);
  const int id = inner_.add_group(world_ranks);
  finish(token);
  std::lock_guard<std::mutex> lock(groups_mutex_);
  if (int(groups_.size()) <= id) groups_.resize(id + 1);
  groups_[id] = world_ranks;
  if (int(collectives_.size()) <= id) collectives_.resize(id + 1, 0);
  return id;
}

int64_t WatchedCommunicator::start(CommOp op, int64_t group) {
  int64_t seq = 0;
  if (op != CommOp::Send && op != CommOp::Recv) {
    if (group >= int64_t(collectives_.size())) collectives_.resize(group + 1, 0);
    seq = ++collectives_[group];
  }
  const int64_t token = next_token_++;
  outstanding_.push_back(Outstanding{token, op, group, seq, monotonic_ns()});
  if (outstanding_.size() == 1) publish();
  return token;
}

void WatchedCommunicator::finish(int64_t token) {
  auto it = std::find_if(outstanding_.begin(), outstanding_.end(),
                         [&](const Outstanding& o) { return o.token == token; });
  if (it == outstanding_.end()) return;
  const bool was_oldest = it == outstanding_.begin();
  outstanding_.erase(it);
  if (was_oldest) publish();
}

void WatchedCommunicator::publish() {
  if (outstanding_.empty()) {
    board_.leave();
    return;
  }
  const Outstanding& o = outstanding_.front();  // started first: waited longest
  board_.enter(o.op, o.group, o.seq, o.since_ns);
}

std::unique_ptr<CommRequest> WatchedCommunicator::iallreduce_sum(float* data, int64_t count,
                                                                 int group) {
  const int64_t token = start(CommOp::Iallreduce, group);
  return std::make_unique<Request>(*this, token, inner_.iallreduce_sum(data, count, group));
}

void WatchedCommunicator::allreduce_sum(float* data, int64_t count, int group) {
  Mark m(this, start(CommOp::Allreduce, group), &WatchedCommunicator::finish);
  inner_.allreduce_sum(data, count, group);
}

void WatchedCommunicator::allreduce_sum(double* data, int64_t count, int group) {
  Mark m(this, start(CommOp::Allreduce, group), &WatchedCommunicator::finish);
  inner_.allreduce_sum(data, count, group);
}

void WatchedCommunicator::broadcast(float* data, int64_t count, int root_world_rank, int group) {
  Mark m(this, start(CommOp::Broadcast, group), &WatchedCommunicator::finish);
  inner_.broadcast(data, count, root_world_rank, group);
}

void WatchedCommunicator::broadcast_bytes(void* data, int64_t bytes, int root_world_rank) {
  Mark m(this, start(CommOp::Broadcast, 0), &WatchedCommunicator::finish);
  inner_.broadcast_bytes(data, bytes, root_world_rank);
}

std::unique_ptr<CommRequest> WatchedCommunicator::isend(const float* data, int64_t count, int peer,
                                                        int tag) {
  const int64_t token = start(CommOp::Send, peer);
  return std::make_unique<Request>(*this, token, inner_.isend(data, count, peer, tag));
}

std::unique_ptr<CommRequest> WatchedCommunicator::irecv(float* data, int64_t count, int peer,
                                                        int tag) {
  const int64_t token = start(CommOp::Recv, peer);
  return std::make_unique<Request>(*this, token, inner_.irecv(data, count, peer, tag));
}

std::unique_ptr<CommRequest> WatchedCommunicator::ibroadcast(float* data, int64_t count,
                                                             int root_world_rank, int group) {
  const int64_t token = start(CommOp::Broadcast, group);
  return std::make_unique<Request>(*this, token,
                                   inner_.ibroadcast(data, count, root_world_rank, group));
}

void WatchedCommunicator::scatter_bytes(const void* send,
                                        const std::vector<int64_t>& bytes_per_rank, void* recv,
                                        int root_world_rank) {
  Mark m(this, start(CommOp::Broadcast, 0), &WatchedCommunicator::finish);  // from a root
  inner_.scatter_bytes(send, bytes_per_rank, recv, root_world_rank);
}

std::unique_ptr<CommRequest> WatchedCommunicator::ibroadcast_words(uint32_t* data, int64_t count,
                                                                   int root_world_rank, int group) {
  const int64_t token = start(CommOp::Broadcast, group);
  return std::make_unique<Request>(*this, token,
                                   inner_.ibroadcast_words(data, count, root_world_rank, group));
}

// A reduce onto a stage's owner (waves) is a collective like an allreduce for the watchdog.
std::unique_ptr<CommRequest> WatchedCommunicator::ireduce_sum(float* data, int64_t count,
                                                              int root_world_rank, int group) {
  const int64_t token = start(CommOp::Iallreduce, group);
  return std::make_unique<Request>(*this, token,
                                   inner_.ireduce_sum(data, count, root_world_rank, group));
}

std::unique_ptr<RegionMark> WatchedCommunicator::watch_region(CommRegion region) {
  CommOp op = CommOp::CheckpointWrite;
  switch (region) {
    case CommRegion::CheckpointWrite:
      op = CommOp::CheckpointWrite;
      break;
    case CommRegion::GraphedStep:
      op = CommOp::GraphedStep;
      break;
  }
  return std::make_unique<Region>(*this, start(op, 0));
}

void WatchedCommunicator::barrier() {
  Mark m(this, start(CommOp::Barrier, 0), &WatchedCommunicator::finish);
  inner_.barrier();
}

}  // namespace wt

#include "comm/shm_point_to_point.hpp"

#include <climits>
#include <cstring>
#include <stdexcept>
#include <string>

#include "comm/shared_window.hpp"
#include "util/mpi_check.hpp"
#include "util/unwinding.hpp"

namespace wt {

namespace {

// Each region of a ring starts with this many bytes: the receiver's "consumed" flag (a uint32)
// and padding, so the floats after it start on a cache line.
constexpr int64_t kRegionHeader = 64;
// MPI guarantees tags up to 32767; a payload's tag is its sequence number modulo this, and far
// fewer messages than that are ever in flight between two ranks.
constexpr int64_t kPayloadTags = 32768;

uint32_t* consumed_flag(char* region) { return reinterpret_cast<uint32_t*>(region); }

// A request still pending when its owner goes: waited for, or withdrawn while an exception
// unwinds (the peer may never come: util/unwinding.hpp).
void finish_or_withdraw(MPI_Request& request) {
  if (request == MPI_REQUEST_NULL) return;
  if (!exception_unwinding()) {
    MPI_Wait(&request, MPI_STATUS_IGNORE);
  } else {
    MPI_Cancel(&request);
    MPI_Request_free(&request);
  }
}

// A send: the bytes are in our ring (or on their way through MPI) and the header is on its way.
class ShmSend : public CommRequest {
 public:
  ShmPointToPoint::Header header;
  MPI_Request requests[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};  // the header's, the payload's

  ~ShmSend() override {
    for (MPI_Request& r : requests) finish_or_withdraw(r);
  }
  bool test() override {
    int done = 0;
    WT_MPI_CHECK(MPI_Testall(2, requests, &done, MPI_STATUSES_IGNORE));
    return done != 0;
  }
  void wait() override { WT_MPI_CHECK(MPI_Waitall(2, requests, MPI_STATUSES_IGNORE)); }
};

// A receive: first the header (matched by MPI with the caller's tag), then the bytes, copied out
// of the sender's ring or received through MPI.
class ShmReceive : public CommRequest {
 public:
  ShmReceive(ShmPointToPoint& channel, float* data, int64_t room, int peer, int tag)
      : channel_(channel), data_(data), room_(room), peer_(peer), tag_(tag) {
    WT_MPI_CHECK(MPI_Irecv(&header_, sizeof header_, MPI_BYTE, peer, tag, channel.headers(),
                           &header_request_));
  }
  ~ShmReceive() override {
    finish_or_withdraw(header_request_);
    finish_or_withdraw(payload_request_);
  }
  bool test() override {
    if (!header_arrived_) {
      int flag = 0;
      WT_MPI_CHECK(MPI_Test(&header_request_, &flag, MPI_STATUS_IGNORE));
      if (!flag) return false;
      take_header();
    }
    int flag = 1;
    if (payload_request_ != MPI_REQUEST_NULL)
      WT_MPI_CHECK(MPI_Test(&payload_request_, &flag, MPI_STATUS_IGNORE));
    return flag != 0;
  }
  void wait() override {
    if (!header_arrived_) {
      WT_MPI_CHECK(MPI_Wait(&header_request_, MPI_STATUS_IGNORE));
      take_header();
    }
    WT_MPI_CHECK(MPI_Wait(&payload_request_, MPI_STATUS_IGNORE));
  }

 private:
  // Copies the message out of the sender's ring, or posts the receive of its MPI payload.
  void take_header() {
    header_arrived_ = true;
    if (header_.count > room_)
      throw std::runtime_error("a message of " + std::to_string(header_.count) +
                               " floats from rank " + std::to_string(peer_) + " (tag " +
                               std::to_string(tag_) + ") does not fit its receive of " +
                               std::to_string(room_));
    if (header_.offset < 0) {
      WT_MPI_CHECK(MPI_Irecv(data_, int(header_.count), MPI_FLOAT, peer_,
                             ShmPointToPoint::payload_tag(header_.sequence), channel_.payloads(),
                             &payload_request_));
      return;
    }
    std::memcpy(data_, channel_.message_in(peer_, header_.offset),
                size_t(header_.count) * sizeof(float));
    channel_.mark_consumed(peer_, header_.offset);
  }

  ShmPointToPoint& channel_;
  float* data_;
  int64_t room_;
  int peer_, tag_;
  ShmPointToPoint::Header header_;
  bool header_arrived_ = false;
  MPI_Request header_request_ = MPI_REQUEST_NULL, payload_request_ = MPI_REQUEST_NULL;
};

}  // namespace

std::unique_ptr<ShmPointToPoint> ShmPointToPoint::create(MPI_Comm world, int64_t ring_bytes) {
  int size = 0;
  MPI_Comm_size(world, &size);
  if (size < 2 || ring_bytes <= 0) return nullptr;  // the same on every rank
  MPI_Comm node;
  WT_MPI_CHECK(MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
  return std::unique_ptr<ShmPointToPoint>(new ShmPointToPoint(world, node, ring_bytes));
}

ShmPointToPoint::ShmPointToPoint(MPI_Comm world, MPI_Comm node, int64_t ring_bytes)
    : node_(node), ring_bytes_((ring_bytes + kRegionHeader - 1) / kRegionHeader * kRegionHeader) {
  WT_MPI_CHECK(MPI_Comm_dup(world, &headers_));
  WT_MPI_CHECK(MPI_Comm_dup(world, &payloads_));
  int size = 0, node_size = 0;
  MPI_Comm_size(world, &size);
  MPI_Comm_size(node_, &node_size);
  node_rank_of_.assign(size_t(size), -1);
  next_sequence_.assign(size_t(size), 0);
  // Ranks alone on their node, or on a node whose file size limit keeps the window out, send
  // everything through MPI (reaches() is false for every peer).
  if (node_size < 2 || !shared_window_fits(node_, double(node_size) * double(ring_bytes_))) return;
  std::vector<int> node_ranks(static_cast<size_t>(node_size)), world_ranks(node_ranks.size());
  for (int r = 0; r < node_size; ++r) node_ranks[size_t(r)] = r;
  MPI_Group node_group, world_group;
  MPI_Comm_group(node_, &node_group);
  MPI_Comm_group(world, &world_group);
  MPI_Group_translate_ranks(node_group, node_size, node_ranks.data(), world_group,
                            world_ranks.data());
  MPI_Group_free(&node_group);
  MPI_Group_free(&world_group);
  for (int r = 0; r < node_size; ++r) node_rank_of_[size_t(world_ranks[size_t(r)])] = r;
  MPI_Comm_rank(node_, &node_rank_);

  char* mine = nullptr;
  WT_MPI_CHECK(
      MPI_Win_allocate_shared(MPI_Aint(ring_bytes_), 1, MPI_INFO_NULL, node_, &mine, &win_));
  ring_of_.resize(size_t(node_size));
  for (int r = 0; r < node_size; ++r) {
    MPI_Aint bytes = 0;
    int disp = 0;
    WT_MPI_CHECK(MPI_Win_shared_query(win_, r, &bytes, &disp, &ring_of_[size_t(r)]));
  }
  WT_MPI_CHECK(MPI_Win_lock_all(MPI_MODE_NOCHECK, win_));
}

ShmPointToPoint::~ShmPointToPoint() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized || exception_unwinding()) return;  // collective: util/unwinding.hpp
  free_shared_window(win_);
  MPI_Comm_free(&node_);
  MPI_Comm_free(&headers_);
  MPI_Comm_free(&payloads_);
}

bool ShmPointToPoint::reaches(int world_rank) const {
  return win_ != MPI_WIN_NULL && world_rank >= 0 && world_rank < int(node_rank_of_.size()) &&
         node_rank_of_[size_t(world_rank)] >= 0;
}

int ShmPointToPoint::payload_tag(int64_t sequence) { return int(sequence % kPayloadTags); }

char* ShmPointToPoint::region(int node_rank, int64_t offset) const {
  return ring_of_[size_t(node_rank)] + offset;
}

const float* ShmPointToPoint::message_in(int sender, int64_t offset) const {
  MPI_Win_sync(win_);  // the sender's copy, published before its header, is visible after this
  return reinterpret_cast<const float*>(region(node_rank_of_[size_t(sender)], offset) +
                                        kRegionHeader);
}

void ShmPointToPoint::mark_consumed(int sender, int64_t offset) {
  __atomic_store_n(consumed_flag(region(node_rank_of_[size_t(sender)], offset)), 1u,
                   __ATOMIC_RELEASE);
}

void ShmPointToPoint::reclaim() {
  char* ring = ring_of_[size_t(node_rank_)];
  while (!in_flight_.empty() &&
         __atomic_load_n(consumed_flag(ring + in_flight_.front().offset), __ATOMIC_ACQUIRE) != 0)
    in_flight_.pop_front();
  if (in_flight_.empty()) head_ = 0;
}

int64_t ShmPointToPoint::allocate(int64_t bytes) {
  if (bytes > ring_bytes_) return -1;
  int64_t at = -1;
  const int64_t tail = in_flight_.empty() ? 0 : in_flight_.front().offset;
  if (in_flight_.empty() || head_ > tail) {  // live bytes are [tail, head_)
    if (head_ + bytes <= ring_bytes_) {
      at = head_;
    } else if (bytes <= tail) {
      at = 0;  // wrap: [0, bytes) ends before the oldest region
    }
  } else if (head_ + bytes <= tail) {  // wrapped: the free bytes are [head_, tail)
    at = head_;
  }
  if (at < 0) return -1;
  head_ = at + bytes;
  in_flight_.push_back({at, bytes});
  return at;
}

std::unique_ptr<CommRequest> ShmPointToPoint::isend(const float* data, int64_t count, int peer,
                                                    int tag) {
  auto send = std::make_unique<ShmSend>();
  Header& header = send->header;
  header.count = count;
  header.sequence = next_sequence_[size_t(peer)]++;
  reclaim();
  const int64_t bytes = count * int64_t(sizeof(float));
  const int64_t region_bytes =
      (kRegionHeader + bytes + kRegionHeader - 1) / kRegionHeader * kRegionHeader;
  header.offset = allocate(region_bytes);
  if (header.offset >= 0) {
    char* at = region(node_rank_, header.offset);
    __atomic_store_n(consumed_flag(at), 0u, __ATOMIC_RELAXED);
    std::memcpy(at + kRegionHeader, data, size_t(bytes));
    MPI_Win_sync(win_);  // the bytes are visible before the header can be
    ++sent_.through_ring;
  } else {
    if (count > INT_MAX) throw std::runtime_error("message larger than 2^31 elements");
    WT_MPI_CHECK(MPI_Isend(data, int(count), MPI_FLOAT, peer, payload_tag(header.sequence),
                           payloads_, &send->requests[1]));
    ++sent_.through_mpi;
  }
  WT_MPI_CHECK(
      MPI_Isend(&header, sizeof header, MPI_BYTE, peer, tag, headers_, &send->requests[0]));
  return send;
}

std::unique_ptr<CommRequest> ShmPointToPoint::irecv(float* data, int64_t count, int peer, int tag) {
  return std::make_unique<ShmReceive>(*this, data, count, peer, tag);
}

}  // namespace wt

#include "comm/shm_point_to_point.hpp"

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

uint32_t* consumed_flag(char* region) { return reinterpret_cast<uint32_t*>(region); }

// One MPI message of a header and `count` floats after it, wherever each lies (MPI_BOTTOM).
// A receive of this type also takes a message of the header alone (a prefix of its signature).
MPI_Datatype header_and_floats(ShmPointToPoint::Header* header, float* data, int64_t count) {
  int lengths[2] = {int(sizeof *header), mpi_count(count)};
  MPI_Aint at[2];
  MPI_Get_address(header, &at[0]);
  MPI_Get_address(data, &at[1]);
  MPI_Datatype types[2] = {MPI_BYTE, MPI_FLOAT}, type;
  WT_MPI_CHECK(MPI_Type_create_struct(2, lengths, at, types, &type));
  WT_MPI_CHECK(MPI_Type_commit(&type));
  return type;
}

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

// A send: the bytes are in our ring and the header is on its way, or both travel as one MPI
// message.
class ShmSend : public CommRequest {
 public:
  ShmPointToPoint::Header header;
  MPI_Request request = MPI_REQUEST_NULL;

  ~ShmSend() override { finish_or_withdraw(request); }
  bool test() override {
    int done = 0;
    WT_MPI_CHECK(MPI_Test(&request, &done, MPI_STATUS_IGNORE));
    return done != 0;
  }
  void wait() override { WT_MPI_CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE)); }
};

// A receive: one MPI message, matched with the caller's tag, that holds the header and, when the
// sender's ring had no room, the floats; otherwise they are copied out of the sender's ring.
// Posted whole at once, so it is matched whenever this rank is inside MPI, as MPI_Irecv is.
class ShmReceive : public CommRequest {
 public:
  ShmReceive(ShmPointToPoint& channel, float* data, int64_t room, int peer, int tag)
      : channel_(channel), data_(data), room_(room), peer_(peer), tag_(tag) {
    MPI_Datatype type = header_and_floats(&header_, data, room);
    const int posted = MPI_Irecv(MPI_BOTTOM, 1, type, peer, tag, channel.headers(), &request_);
    MPI_Type_free(&type);  // the receive keeps what it needs
    WT_MPI_CHECK(posted);
  }
  ~ShmReceive() override {
    if (request_ != MPI_REQUEST_NULL && !exception_unwinding()) {
      try {
        wait();  // as MpiRequest's: the data lands, and a ring region is given back
      } catch (const std::exception&) {
      }
    }
    finish_or_withdraw(request_);
  }
  bool test() override {
    if (arrived_) return true;
    int flag = 0;
    WT_MPI_CHECK(MPI_Test(&request_, &flag, MPI_STATUS_IGNORE));
    if (flag) take_message();
    return flag != 0;
  }
  void wait() override {
    if (arrived_) return;
    WT_MPI_CHECK(MPI_Wait(&request_, MPI_STATUS_IGNORE));
    take_message();
  }

 private:
  // Copies the message out of the sender's ring (MPI has delivered a fallback's floats).
  void take_message() {
    arrived_ = true;
    if (header_.offset < 0) return;
    if (header_.count > room_) {
      channel_.mark_consumed(peer_, header_.offset);  // the sender's ring must not stay full
      throw std::runtime_error("a message of " + std::to_string(header_.count) +
                               " floats from rank " + std::to_string(peer_) + " (tag " +
                               std::to_string(tag_) + ") does not fit its receive of " +
                               std::to_string(room_));
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
  bool arrived_ = false;
  MPI_Request request_ = MPI_REQUEST_NULL;
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
  int size = 0, node_size = 0;
  MPI_Comm_size(world, &size);
  MPI_Comm_size(node_, &node_size);
  node_rank_of_.assign(size_t(size), -1);
  // Every rank of the node allocates the same ring, the largest any asked for: a rank that
  // skipped the window's collective allocation while the others made it would hang them.
  WT_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &ring_bytes_, 1, MPI_INT64_T, MPI_MAX, node_));
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
}

bool ShmPointToPoint::reaches(int world_rank) const {
  return win_ != MPI_WIN_NULL && world_rank >= 0 && world_rank < int(node_rank_of_.size()) &&
         node_rank_of_[size_t(world_rank)] >= 0;
}

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
  reclaim();
  const int64_t bytes = count * int64_t(sizeof(float));
  const int64_t region_bytes =
      (kRegionHeader + bytes + kRegionHeader - 1) / kRegionHeader * kRegionHeader;
  header.offset = allocate(region_bytes);
  if (header.offset < 0) {  // no room: the header and the floats as one MPI message
    ++sent_.through_mpi;
    MPI_Datatype type = header_and_floats(&header, const_cast<float*>(data), count);
    const int posted = MPI_Isend(MPI_BOTTOM, 1, type, peer, tag, headers_, &send->request);
    MPI_Type_free(&type);
    WT_MPI_CHECK(posted);
    return send;
  }
  char* at = region(node_rank_, header.offset);
  __atomic_store_n(consumed_flag(at), 0u, __ATOMIC_RELAXED);
  std::memcpy(at + kRegionHeader, data, size_t(bytes));
  MPI_Win_sync(win_);  // the bytes are visible before the header can be
  ++sent_.through_ring;
  WT_MPI_CHECK(MPI_Isend(&header, sizeof header, MPI_BYTE, peer, tag, headers_, &send->request));
  return send;
}

std::unique_ptr<CommRequest> ShmPointToPoint::irecv(float* data, int64_t count, int peer, int tag) {
  return std::make_unique<ShmReceive>(*this, data, count, peer, tag);
}

}  // namespace wt

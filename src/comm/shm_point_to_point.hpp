#pragma once
// Point-to-point messages between ranks of one node whose bytes travel through an MPI-3
// shared-memory window, and only a small header through MPI. Open MPI's shared-memory transport
// without single copy moves a large message (a stage's 0.4-1.6 MB activation) as a rendezvous of
// 32 kB fragments that advance only while both ranks are inside MPI: a rank busy computing (a
// background tasklet, a layer) holds its peer's send, and the receive ends only after several
// round trips once it returns. Here the sender copies the message into its own ring in the window
// and sends a 16-byte header, which MPI delivers eagerly: the send ends at once, whatever the
// receiver does, and the receive is one header match and one copy.
//
// MPI still matches every message (the header carries the caller's tag), so the order and tag
// rules are MPI's. A message the ring has no room for (too large, or the receivers are behind)
// goes through MPI whole, its floats in the header's message (a receive is posted as one MPI
// receive of a header and up to its room of floats, so it is matched as MPI_Irecv would be).
#include <mpi.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "comm/communicator.hpp"

namespace wt {

class ShmPointToPoint {
 public:
  // Collective over `world`. Null when no other rank shares this node or the window cannot be
  // had (a file size limit); ring_bytes is each rank's ring.
  static std::unique_ptr<ShmPointToPoint> create(MPI_Comm world, int64_t ring_bytes);
  ~ShmPointToPoint();
  ShmPointToPoint(const ShmPointToPoint&) = delete;
  ShmPointToPoint& operator=(const ShmPointToPoint&) = delete;

  // Whether messages to and from this world rank go through here (it shares this node).
  bool reaches(int world_rank) const;
  // As MPI_Isend and MPI_Irecv on `world` (a receive may be larger than the message).
  std::unique_ptr<CommRequest> isend(const float* data, int64_t count, int peer, int tag);
  std::unique_ptr<CommRequest> irecv(float* data, int64_t count, int peer, int tag);

  struct Sent {
    int64_t through_ring = 0;
    int64_t through_mpi = 0;  // no room in the ring
  };
  Sent sent() const { return sent_; }

  // Where a message's floats are: at `offset` in the sender's ring, or (offset < 0) after the
  // header in the same MPI message.
  struct Header {
    int64_t offset = -1;
    int64_t count = 0;
  };
  MPI_Comm headers() const { return headers_; }
  const float* message_in(int sender, int64_t offset) const;
  void mark_consumed(int sender, int64_t offset);  // the receiver has copied it out

 private:
  ShmPointToPoint(MPI_Comm world, MPI_Comm node, int64_t ring_bytes);
  int64_t allocate(int64_t bytes);  // an offset in our ring, or -1 when it has no room
  void reclaim();                   // frees the oldest regions their receivers have consumed
  char* region(int node_rank, int64_t offset) const;

  MPI_Comm headers_ = MPI_COMM_NULL, node_ = MPI_COMM_NULL;
  MPI_Win win_ = MPI_WIN_NULL;
  int64_t ring_bytes_ = 0;
  int node_rank_ = 0;              // ours
  std::vector<int> node_rank_of_;  // by world rank; -1 off this node
  std::vector<char*> ring_of_;     // by node rank
  struct Region {
    int64_t offset, bytes;
  };
  std::deque<Region> in_flight_;  // our ring's regions, oldest first
  int64_t head_ = 0;              // where the next region goes
  Sent sent_;
};

}  // namespace wt

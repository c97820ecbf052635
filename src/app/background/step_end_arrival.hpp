#pragma once
// The multiplexer's step-end arrival (multiplexer.cpp, fill_step_end): one non-blocking float
// allreduce, posted by each foreground rank when it reaches its step's end, that carries from
// every rank what the step's end must agree on:
//   - the run budget's streak of steps alone it asks for (every rank runs the longest);
//   - its vote on a non-finite gradient (NonFiniteGuard::vote; summed, exact in a float);
//   - when it arrived, by its steady_clock, in two floats whose sum is exact (a float alone
//     keeps 4 ms at a day of uptime; summed with the other ranks' zeros, both come back as they
//     went).
// A rank that filled its wait with background work learns when its last peer really arrived:
// the next step's first receive counts from then.
#include <cstdint>
#include <memory>
#include <vector>

#include "comm/communicator.hpp"

namespace wt {

class StepEndArrival {
 public:
  // Posts this rank's entries (now: its arrival). clock_offset_s: added to the arrival time this
  // rank sends (a test's stand-in for another host's clock).
  StepEndArrival(Communicator& comm, int64_t streak, double vote, double clock_offset_s = 0);
  // Whether every rank has arrived (progresses the allreduce); notes when one had not.
  bool test();
  void wait();
  double arrived_at() const { return arrived_at_; }
  // After wait(): the longest streak any rank asked for, and the votes summed.
  int64_t longest_streak() const;
  double votes() const { return double(values_[size_t(ranks_)]); }
  // After wait(): when the last peer arrived, by this rank's clock; -1 when its time cannot be
  // of this clock (a peer on another host: outside the span in which that arrival happened,
  // after the last test() that found a rank missing and before wait() returned) or no test()
  // found one missing.
  double last_peer_arrival() const;

 private:
  int ranks_, rank_;
  std::vector<float> values_;
  double arrived_at_ = 0, done_at_ = 0;
  double not_yet_at_ = -1;  // the last test() that found a rank missing; -1: none did
  std::unique_ptr<CommRequest> request_;
};

}  // namespace wt

#pragma once
// The foreground's first wait of a step, when the step starts idle: a later pipeline stage
// waits at a step's end for its peers (the multiplexer's step-end arrival), then at once for the
// next step's input. It is idle across both, so background work at the step's end may run on
// into the second wait, and the second is best timed from the peers' arrival, not from when this
// rank (done with its tasklet) posts its receive: the peer's time to its send is what it is.
//
// Its runs are taken in solo steps only (no tasklet of this rank delayed the end it sees, and
// so its peer's send), from the last peer's arrival as StepEndArrival reports it (same-host
// clocks only); the expectation is the lower median of the recent runs.
#include <cstddef>
#include <vector>

#include "exec/executor.hpp"

namespace wt {

class LeadWait {
 public:
  // Found when `program` has one stream with instructions and, before its first Wait, only
  // batch loads and receive posts, and that Wait is on a receive; none otherwise.
  explicit LeadWait(const RankProgram& program);
  bool found() const { return stream_ >= 0; }
  bool is(int stream, size_t index) const { return stream == stream_ && index == index_; }
  int stream() const { return stream_; }
  size_t index() const { return index_; }
  // At a step's end, before its arrival: whether the step ran alone, and when its lead wait
  // ended (-1: unknown). A solo step's run from the last arrival joins the recent runs.
  void step_ended(bool solo, double lead_end);
  // After the step's arrival: when the last peer arrived by this rank's clock (-1: unknown).
  void peers_arrived(double at) { arrival_ = at; }
  double arrival() const { return arrival_; }
  // Seconds from the peers' arrival to the lead wait's end, expected; -1 while fewer than
  // kMinRuns runs are known.
  double expected_after_arrival() const;
  static constexpr size_t kRecentRuns = 8, kMinRuns = 3;

 private:
  int stream_ = -1;
  size_t index_ = 0;
  double arrival_ = -1;
  std::vector<double> runs_;
};

}  // namespace wt

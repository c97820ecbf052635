#include "app/background/step_end_arrival.hpp"

#include <algorithm>

#include "util/steady_seconds.hpp"

namespace wt {

namespace {

// The allreduce's message latency and the clocks' read order: a same-host peer's time may
// precede the last test that missed it by this much.
constexpr double kClockSlack_s = 1e-3;

void store_time(double t, float* out) {
  out[0] = float(t);
  out[1] = float(t - double(out[0]));
}

double load_time(const float* in) { return double(in[0]) + double(in[1]); }

}  // namespace

// Layout: [0, ranks) streaks, [ranks] votes, then each rank's arrival time as two floats.
StepEndArrival::StepEndArrival(Communicator& comm, int64_t streak, double vote,
                               double clock_offset_s)
    : ranks_(comm.size()), rank_(comm.rank()), values_(size_t(3 * ranks_ + 1), 0.f) {
  values_[size_t(rank_)] = float(streak);
  values_[size_t(ranks_)] = float(vote);
  arrived_at_ = steady_seconds();
  store_time(arrived_at_ + clock_offset_s, &values_[size_t(ranks_ + 1 + 2 * rank_)]);
  request_ = comm.iallreduce_sum(values_.data(), int64_t(values_.size()), 0);
}

bool StepEndArrival::test() {
  const double now = steady_seconds();
  if (request_->test()) return true;
  not_yet_at_ = now;
  return false;
}

void StepEndArrival::wait() {
  test();  // a rank still missing now bounds its arrival time from below
  request_->wait();
  done_at_ = steady_seconds();
}

int64_t StepEndArrival::longest_streak() const {
  return int64_t(*std::max_element(values_.begin(), values_.begin() + ranks_));
}

double StepEndArrival::last_peer_arrival() const {
  double last = -1;
  for (int r = 0; r < ranks_; ++r)
    if (r != rank_) last = std::max(last, load_time(&values_[size_t(ranks_ + 1 + 2 * r)]));
  if (not_yet_at_ < 0 || last < not_yet_at_ - kClockSlack_s || last > done_at_) return -1;
  return last;
}

}  // namespace wt

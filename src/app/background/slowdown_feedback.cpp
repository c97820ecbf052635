#include "app/background/slowdown_feedback.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace wt {

double slowdown_average(const FeedbackSettings& settings, double average, double run, double solo) {
  const double weight = run > settings.target * solo ? settings.fast : settings.slow;
  return weight * run + (1 - weight) * average;
}

SlowdownFeedback::SlowdownFeedback(const RankProgram& program, FeedbackSettings settings)
    : settings_(settings), solo_(program), recent_solo_(program, kRecentSoloRuns) {
  for (const auto& stream : program.streams) {
    average_.emplace_back(stream.size(), -1.0);
    last_end_.emplace_back(stream.size(), -1.0);
  }
  solo_.set_recording(true);
  recent_solo_.set_recording(true);
}

void SlowdownFeedback::set_warming_up(bool warming_up) {
  warming_up_ = warming_up;
  solo_.set_recording(warming_up);
  recent_solo_.set_recording(warming_up);
}

void SlowdownFeedback::set_solo_step(bool solo) { recent_solo_.set_recording(warming_up_ || solo); }

double SlowdownFeedback::expected_seconds(int stream, size_t index) const {
  return recent_solo_.median_seconds(stream, index);
}

double SlowdownFeedback::average_seconds(int stream, size_t index) const {
  const double average = average_[size_t(stream)][index];
  return average >= 0 ? average : solo_.solo_seconds(stream, index);
}

bool SlowdownFeedback::above_target(int stream, size_t index) const {
  const double solo = solo_.solo_seconds(stream, index);
  return solo >= 0 && average_seconds(stream, index) > settings_.target * solo;
}

void SlowdownFeedback::executed(int stream, const Instruction& ins, double t_begin, double t_end,
                                int64_t bytes) {
  recent_solo_.executed(stream, ins, t_begin, t_end, bytes);
  const size_t index = solo_.index_of(stream, ins);
  last_end_[size_t(stream)][index] = t_end;
  if (warming_up_) return solo_.executed(stream, ins, t_begin, t_end, bytes);
  const double solo = solo_.solo_seconds(stream, index);
  if (solo < 0) return;
  average_[size_t(stream)][index] =
      slowdown_average(settings_, average_seconds(stream, index), t_end - t_begin, solo);
}

namespace {

constexpr size_t kRecentSoloSteps = 16;

}  // namespace

RunBudget::RunBudget(double target, int64_t solo_every, double max_credit_steps)
    : target_(target), solo_every_(solo_every), max_credit_steps_(max_credit_steps) {}

double RunBudget::solo_step_seconds() const {
  if (recent_solo_.empty()) return -1;
  return std::accumulate(recent_solo_.begin(), recent_solo_.end(), 0.0) /
         double(recent_solo_.size());
}

bool RunBudget::admits() const { return admits_given(!recent_solo_.empty(), since_solo_); }

bool RunBudget::admits_after_step(bool solo) const {
  return admits_given(solo || !recent_solo_.empty(), solo ? 0 : since_solo_ + 1);
}

int64_t RunBudget::solo_steps_after_step(bool solo) const {
  if (admits_after_step(solo)) return 0;
  const double solo_s = solo_step_seconds();
  // What a step alone earns, less what falls due of a spread charge meanwhile.
  const bool spreading = steps_ - spread_from_ < spread_steps_;
  const double earned_per_step =
      (target_ - 1) * solo_s - (spreading ? spread_s_ / double(spread_steps_) : 0.0);
  if (solo_s <= 0 || earned_per_step <= 0) return 1;
  const double over_whole_run = total_s_ + charged_due() - target_ * double(steps_) * solo_s;
  const double owed = std::max(debt_s_, over_whole_run);
  const double steps = std::ceil(owed / earned_per_step);
  return std::clamp<int64_t>(steps > 1 ? int64_t(std::min(steps, 1e6)) : 1, 1, kMaxSoloStreak);
}

// The step-by-step debt is priced at each step's solo estimate of the time; when the estimate
// falls (a slow start's solo steps leave the recent window), the steps admitted against the old
// one cost more than it said: the whole run at today's estimate calls that credit back.
bool RunBudget::admits_given(bool solo_known, int64_t since_solo) const {
  return solo_known && since_solo + 1 < solo_every_ && debt_s_ <= 0 &&
         total_s_ + charged_due() <= target_ * double(steps_) * solo_step_seconds();
}

void RunBudget::charge_over_run(double seconds, int64_t steps) {
  if (steps <= 0) return charge(seconds);
  const double due = charged_due() - charged_s_;  // of an earlier one: owed now, the rest later
  charged_s_ += due;
  spread_s_ += seconds - due;
  spread_from_ = steps_;
  spread_steps_ = steps;
}

double RunBudget::charged_due() const {
  const double done = std::min(1.0, double(steps_ - spread_from_) / double(spread_steps_));
  return charged_s_ + spread_s_ * done;
}

void RunBudget::record_step(double seconds, bool solo, double late_start_s) {
  if (solo) {
    recent_solo_.push_back(seconds + late_start_s);
    if (recent_solo_.size() > kRecentSoloSteps) recent_solo_.pop_front();
    since_solo_ = 0;
  } else {
    ++since_solo_;
  }
  const double solo_s = solo_step_seconds();
  ++steps_;
  total_s_ += seconds;
  debt_s_ += seconds - target_ * solo_s;
  debt_s_ = std::max(debt_s_, -max_credit_steps_ * (target_ - 1) * solo_s);
}

double RunBudget::slowdown() const {
  const double solo_s = solo_step_seconds();
  return steps_ > 0 && solo_s > 0 ? total_s_ / (double(steps_) * solo_s) : 1.0;
}

}  // namespace wt

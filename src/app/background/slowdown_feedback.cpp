#include "app/background/slowdown_feedback.hpp"

namespace wt {

double slowdown_average(const FeedbackSettings& settings, double average, double run, double solo) {
  const double weight = run > settings.target * solo ? settings.fast : settings.slow;
  return weight * run + (1 - weight) * average;
}

SlowdownFeedback::SlowdownFeedback(const RankProgram& program, FeedbackSettings settings)
    : settings_(settings), solo_(program) {
  for (const auto& stream : program.streams) average_.emplace_back(stream.size(), -1.0);
  solo_.set_recording(true);
}

void SlowdownFeedback::set_warming_up(bool warming_up) {
  warming_up_ = warming_up;
  solo_.set_recording(warming_up);
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
  if (warming_up_) return solo_.executed(stream, ins, t_begin, t_end, bytes);
  const size_t index = solo_.index_of(stream, ins);
  const double solo = solo_.solo_seconds(stream, index);
  if (solo < 0) return;
  average_[size_t(stream)][index] =
      slowdown_average(settings_, average_seconds(stream, index), t_end - t_begin, solo);
}

}  // namespace wt

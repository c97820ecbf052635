#include "app/background/instruction_times.hpp"

#include <algorithm>
#include <numeric>

namespace wt {

InstructionTimes::InstructionTimes(const RankProgram& program, size_t keep_last)
    : program_(program), keep_last_(keep_last) {
  for (const auto& stream : program.streams) runs_.emplace_back(stream.size());
}

size_t InstructionTimes::index_of(int stream, const Instruction& ins) const {
  return static_cast<size_t>(&ins - program_.streams[size_t(stream)].data());
}

void InstructionTimes::executed(int stream, const Instruction& ins, double t_begin, double t_end,
                                int64_t) {
  if (!recording_) return;
  add_run(runs_[size_t(stream)][index_of(stream, ins)], t_end - t_begin, keep_last_);
}

void add_run(std::vector<double>& runs, double run, size_t keep_last) {
  if (keep_last > 0 && runs.size() == keep_last) runs.erase(runs.begin());
  runs.push_back(run);
}

double InstructionTimes::solo_seconds(int stream, size_t index) const {
  return solo_mean(runs_[size_t(stream)][index]);
}

double InstructionTimes::fastest_seconds(int stream, size_t index) const {
  const std::vector<double>& runs = runs_[size_t(stream)][index];
  return runs.empty() ? -1 : *std::min_element(runs.begin(), runs.end());
}

double InstructionTimes::median_seconds(int stream, size_t index) const {
  return lower_median(runs_[size_t(stream)][index]);
}

double lower_median(const std::vector<double>& runs) {
  if (runs.empty()) return -1;
  const size_t k = (runs.size() - 1) / 2;  // the lower middle's rank
  for (double candidate : runs) {          // the windows hold a few runs: a count beats a sort
    size_t below = 0, equal = 0;
    for (double r : runs) {
      below += r < candidate;
      equal += r == candidate;
    }
    if (below <= k && k < below + equal) return candidate;
  }
  return runs.front();  // not reached: some run holds rank k
}

double solo_mean(const std::vector<double>& runs) {
  if (runs.empty()) return -1;
  const size_t first = runs.size() > 1 ? 1 : 0;
  return std::accumulate(runs.begin() + long(first), runs.end(), 0.0) / double(runs.size() - first);
}

}  // namespace wt

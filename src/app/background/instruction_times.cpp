#include "app/background/instruction_times.hpp"

#include <algorithm>
#include <numeric>

namespace wt {

InstructionTimes::InstructionTimes(const RankProgram& program) : program_(program) {
  for (const auto& stream : program.streams) runs_.emplace_back(stream.size());
}

size_t InstructionTimes::index_of(int stream, const Instruction& ins) const {
  return static_cast<size_t>(&ins - program_.streams[size_t(stream)].data());
}

void InstructionTimes::executed(int stream, const Instruction& ins, double t_begin, double t_end,
                                int64_t) {
  if (recording_) runs_[size_t(stream)][index_of(stream, ins)].push_back(t_end - t_begin);
}

double InstructionTimes::solo_seconds(int stream, size_t index) const {
  return solo_mean(runs_[size_t(stream)][index]);
}

double InstructionTimes::fastest_seconds(int stream, size_t index) const {
  const std::vector<double>& runs = runs_[size_t(stream)][index];
  return runs.empty() ? -1 : *std::min_element(runs.begin(), runs.end());
}

double solo_mean(const std::vector<double>& runs) {
  if (runs.empty()) return -1;
  const size_t first = runs.size() > 1 ? 1 : 0;
  return std::accumulate(runs.begin() + long(first), runs.end(), 0.0) / double(runs.size() - first);
}

}  // namespace wt

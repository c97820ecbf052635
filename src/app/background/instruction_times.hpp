#pragma once
// How long each instruction of one rank's program takes, by (stream, index): the runs seen so
// far, and their solo time (DeepPool's per-tasklet `benchmark_us`): the mean of the runs after
// the first when there are several (the first step pays for warm-up allocations), else the one.
// An InstructionObserver, so the executor tells it every instruction while it is attached.
#include <cstddef>
#include <vector>

#include "exec/executor.hpp"

namespace wt {

// The solo time of a run list: the mean of the runs after the first when there are several (the
// first pays for warm-up allocations), else the one; -1 when there is none.
double solo_mean(const std::vector<double>& runs);

class InstructionTimes : public InstructionObserver {
 public:
  explicit InstructionTimes(const RankProgram& program);
  // Runs are recorded only while recording (the solo steps).
  void set_recording(bool recording) { recording_ = recording; }
  // -1 when the instruction never ran while recording.
  double solo_seconds(int stream, size_t index) const;
  // Its fastest recorded run (a time that a loaded machine's stall did not inflate); -1 when
  // none.
  double fastest_seconds(int stream, size_t index) const;
  // The instruction's position in its stream (it must be one of the program's).
  size_t index_of(int stream, const Instruction& ins) const;
  size_t instructions(int stream) const { return runs_[size_t(stream)].size(); }

  void executed(int stream, const Instruction& ins, double t_begin, double t_end,
                int64_t bytes) override;
  void completed(int, double) override {}

 private:
  const RankProgram& program_;
  bool recording_ = false;
  std::vector<std::vector<std::vector<double>>> runs_;  // [stream][index]: seconds of each run
};

}  // namespace wt

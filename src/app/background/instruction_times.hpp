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
// Appends a run; with keep_last > 0 the list keeps only the last keep_last runs (a rolling
// window, no allocation once full).
void add_run(std::vector<double>& runs, double run, size_t keep_last);
// The lower median of a short run list (a stall or the first run's warm-up allocations do not
// move it); -1 when there is none. No allocation: it is read at every idle check.
double lower_median(const std::vector<double>& runs);

class InstructionTimes : public InstructionObserver {
 public:
  // keep_last > 0: only each instruction's last keep_last runs are kept (a rolling window).
  explicit InstructionTimes(const RankProgram& program, size_t keep_last = 0);
  // Runs are recorded only while recording (the solo steps).
  void set_recording(bool recording) { recording_ = recording; }
  // -1 when the instruction never ran while recording.
  double solo_seconds(int stream, size_t index) const;
  // Its fastest recorded run (a time that a loaded machine's stall did not inflate); -1 when
  // none.
  double fastest_seconds(int stream, size_t index) const;
  // The lower median of its recorded runs (lower_median); -1 when none.
  double median_seconds(int stream, size_t index) const;
  // The instruction's position in its stream (it must be one of the program's).
  size_t index_of(int stream, const Instruction& ins) const;
  size_t instructions(int stream) const { return runs_[size_t(stream)].size(); }

  void executed(int stream, const Instruction& ins, double t_begin, double t_end,
                int64_t bytes) override;
  void completed(int, double) override {}

 private:
  const RankProgram& program_;
  size_t keep_last_;
  bool recording_ = false;
  std::vector<std::vector<std::vector<double>>> runs_;  // [stream][index]: seconds of each run
};

}  // namespace wt

#pragma once
// Drives the jobs of a rank: each job's steps from its start step to its total, the jobs taking
// turns one step at a time (they share the rank's device), and each job's observers around every
// step in the order they were given. A stop (an observer calling Job::stop_after) ends a job
// after the step in hand. Interleaved (co-location, Waterwave), the jobs' steps run together
// instead: one instruction of each job in turn, each job on its own device stream
// (JobOptions::colocated_stream), so their work overlaps inside a step; a job that finishes early
// leaves the others running.
#include <vector>

#include "app/step_observer.hpp"

namespace wt {

class TrainingLoop {
 public:
  void add_job(Job& job, std::vector<StepObserver*> observers);
  void run();
  void set_interleaved(bool interleaved) { interleaved_ = interleaved; }

 private:
  struct Entry {
    Job* job;
    std::vector<StepObserver*> observers;
    int64_t next_step = 0;
    bool finished = false;
  };
  void step_once(Entry& entry);
  // One step of each of `round`'s jobs, their instructions issued in turn.
  void step_together(const std::vector<Entry*>& round);
  void finish(Entry& entry);
  std::vector<Entry> entries_;
  bool interleaved_ = false;
};

}  // namespace wt

#pragma once
// Drives the jobs of a rank: each job's steps from its start step to its total, the jobs taking
// turns one step at a time (they share the rank's device), and each job's observers around every
// step in the order they were given. A stop (an observer calling Job::stop_after) ends a job
// after the step in hand.
#include <vector>

#include "app/step_observer.hpp"

namespace wt {

class TrainingLoop {
 public:
  void add_job(Job& job, std::vector<StepObserver*> observers);
  void run();

 private:
  struct Entry {
    Job* job;
    std::vector<StepObserver*> observers;
    int64_t next_step = 0;
    bool finished = false;
  };
  void step_once(Entry& entry);
  void finish(Entry& entry);
  std::vector<Entry> entries_;
};

}  // namespace wt

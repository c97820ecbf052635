#pragma once
// Drives the jobs of a rank: each job's steps from its start step to its total, the jobs taking
// turns one step at a time (they share the rank's device), and each job's observers around every
// step in the order they were given. A stop (an observer calling Job::stop_after) ends a job
// after the step in hand. Co-located (Waterwave), the jobs' steps run together instead, each job
// on its device stream (JobOptions::colocated_stream), so their work overlaps inside a step:
// interleaved, one instruction of each job in turn; or in paired rounds (app/paired_rounds.hpp),
// after each job's first two steps alone (warm-up, profile). A job that finishes early leaves
// the others running.
//
// A job alone whose step may run on (Job::may_run_on: a replayed graph, device.overlap_steps)
// has its next step launched before that step's results are collected, so the host's issue
// overlaps the device's work; its observers then see after_step(k) after before_step(k + 1). A
// step is collected before the next launch wherever an observer may communicate after it (a
// metrics row, a checkpoint, an evaluation, a stop) and at the job's last step.
#include <chrono>
#include <optional>
#include <vector>

#include "app/paired_rounds.hpp"
#include "app/step_driver.hpp"
#include "app/step_observer.hpp"

namespace wt {

class DeviceContext;

class TrainingLoop {
 public:
  void add_job(Job& job, std::vector<StepObserver*> observers);
  void run();
  void set_interleaved(bool interleaved) { interleaved_ = interleaved; }
  // Paired rounds (outlives the loop's run); nullptr: none.
  void set_paired_rounds(PairedRounds* rounds) { pairs_ = rounds; }
  // Runs the jobs' steps alone through `driver` instead of Job::run_step (nullptr: none).
  void set_step_driver(StepDriver* driver) { driver_ = driver; }

 private:
  using Clock = std::chrono::steady_clock;
  struct Launched {  // a step launched and not yet collected
    int64_t step = 0;
    int64_t pass = 0;  // the pass that launched it (StepRecord::pass: one stop decision a pass)
    double lr = 0;
    Clock::time_point began;
    uint64_t synchronizations = 0;  // the device's count when it began
  };
  struct Entry {
    Job* job = nullptr;
    std::vector<StepObserver*> observers;
    int64_t next_step = 0;
    bool finished = false;
    std::optional<Launched> running;   // left running while the next step is issued
    Clock::time_point last_collected;  // when the last step was collected, and the count then
    uint64_t synchronizations_at_collect = 0;
  };
  void step_once(Entry& entry);
  // Collects `launched`'s results and tells the observers (after_step).
  void collect(Entry& entry, const Launched& launched);
  // Whether `step`, just launched, may stay running while the next step is issued.
  bool may_leave_running(const Entry& entry, int64_t step) const;
  // The record's time and synchronisations, then the observers' after_step.
  void finish_record(Entry& entry, const Launched& launched, StepRecord& record);
  // The job's step alone, before it joins the rounds (paired rounds: warm-up, then profile).
  void step_alone(Entry& entry);
  bool together(const Entry& entry) const;
  // One step of each of `round`'s jobs, their instructions issued in turn.
  void step_together(const std::vector<Entry*>& round);
  void finish(Entry& entry);
  static void settle_memory(DeviceContext& device);
  std::vector<Entry> entries_;
  int64_t pass_ = 0;  // passes over the jobs so far (StepRecord::pass)
  bool interleaved_ = false;
  PairedRounds* pairs_ = nullptr;
  StepDriver* driver_ = nullptr;
};

}  // namespace wt

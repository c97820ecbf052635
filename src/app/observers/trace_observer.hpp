#pragma once
// [trace] enabled = true: the steps [trace.start_step, trace.end_step) are recorded (instruction
// events and allocator memory samples) into <run dir>/trace.h5. Add it first, so that its
// after_step closes the step before other observers' work.
#include <memory>

#include "app/step_observer.hpp"
#include "exec/trace_recorder.hpp"

namespace wt {

class TraceObserver : public StepObserver {
 public:
  explicit TraceObserver(Job& job);  // collective
  void before_step(Job& job, int64_t step) override;
  void after_step(Job& job, const StepRecord& record) override;
  bool may_communicate_after(const Job&, int64_t step) const override {
    return recorder_->writes_after(step);
  }
  // The window opening at step + 1 runs that step eagerly, with device timers: the step before
  // must be finished first.
  bool must_finish_before_next(const Job& job, int64_t step) const override {
    return may_communicate_after(job, step) || recorder_->starts_at(step + 1);
  }
  void finish(Job& job) override;

 private:
  std::unique_ptr<TraceRecorder> recorder_;
};

}  // namespace wt

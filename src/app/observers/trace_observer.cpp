#include "app/observers/trace_observer.hpp"

#include "job/job.hpp"
#include "mem/caching_allocator.hpp"

namespace wt {

TraceObserver::TraceObserver(Job& job) {
  const RunConfig& cfg = job.config();
  recorder_ = std::make_unique<TraceRecorder>(
      job.comm(), job.executor(), job.device().allocator(), job.id(),
      TraceInfo{job.comm().size(), cfg.schedule.kind, job.model().graph.name, cfg.trace.start_step,
                cfg.trace.end_step},
      job.run_dir() + "/trace.h5");
}

void TraceObserver::before_step(Job&, int64_t step) { recorder_->begin_step(step); }

void TraceObserver::after_step(Job&, const StepRecord& record) { recorder_->end_step(record.step); }

void TraceObserver::finish(Job&) { recorder_->finish(); }

}  // namespace wt

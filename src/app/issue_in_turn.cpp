#include "app/issue_in_turn.hpp"

#include <stdexcept>

#include "app/job_failure.hpp"
#include "exec/executor.hpp"
#include "job/job.hpp"
#include "mem/caching_allocator.hpp"

namespace wt {

void issue_in_turn(const std::vector<Job*>& jobs, const std::vector<size_t>& ends, bool one_by_one,
                   const std::string& where) {
  for (bool reached = false; !reached;) {
    reached = true;
    bool progressed = false;
    for (size_t i = 0; i < jobs.size(); ++i) {
      Executor& executor = jobs[i]->executor();
      if (executor.issued_this_step() >= ends[i]) continue;
      reached = false;
      const FailingJobScope failing(*jobs[i]);
      CachingAllocator::JobScope account(jobs[i]->device().allocator(), jobs[i]->id());
      progressed = executor.issue_ready(true) || progressed;
      if (one_by_one) break;
    }
    if (reached || progressed) continue;
    // Every job waits: let the device run and communication progress, for any of them.
    for (Job* job : jobs) progressed = job->executor().try_progress() || progressed;
    if (!progressed) throw std::logic_error("co-located jobs deadlocked " + where);
  }
}

}  // namespace wt

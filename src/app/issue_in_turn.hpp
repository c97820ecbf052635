#pragma once
// Co-located jobs' begun steps issued together on their shared device: one instruction of each
// job in turn (or, one_by_one, each job's up to its end before the next job's), until job i has
// issued ends[i] instructions of its step. When none can issue, the device runs and communication
// progresses for any of them; when nothing can, it throws std::logic_error naming `where` (a
// deadlock, never a hang). The training loop's interleaving and Waterwave's pairs both use it.
#include <cstddef>
#include <string>
#include <vector>

namespace wt {

class Job;

void issue_in_turn(const std::vector<Job*>& jobs, const std::vector<size_t>& ends, bool one_by_one,
                   const std::string& where);

}  // namespace wt

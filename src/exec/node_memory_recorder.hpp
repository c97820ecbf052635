#pragma once
// Waterwave's memory profile (§4.3; issue 20 piece 2): one solo step of a job whose schedule runs
// node by node (sched/job_placement.hpp per_node), observed instruction by instruction: the change
// in the job's bytes in use across each node's forward and backward, and the transient peak above
// what was in use when it began. Bytes count when the host issues the work (as Waterwave's
// "usable after scheduling"): what the allocator hands out and takes back. Instructions that are
// not a node's pass count with the node pass before them (an AllReduce with the backward it
// follows, the Step with the last); those before the first node pass (the LoadBatch) with the
// first.
#include <vector>

#include "exec/executor.hpp"
#include "mem/caching_allocator.hpp"
#include "plan/node_groups.hpp"

namespace wt {

class NodeMemoryRecorder final : public InstructionObserver {
 public:
  // nodes: the model's node count; job: the account the job's allocations count towards.
  NodeMemoryRecorder(CachingAllocator& memory, int job, int nodes);
  // Starts a profile: call before the step (the allocator's peaks are reset).
  void begin();
  void executed(int stream, const Instruction& ins, double t_begin, double t_end,
                int64_t bytes) override;
  void completed(int, double) override {}
  // The step's profile; throws std::logic_error if some node's pass was not seen.
  NodeMemoryProfile profile() const;
  // The job's bytes in use at the end of the step less those at begin().
  int64_t step_net() const { return in_use_ - start_; }
  // The job's bytes in use at begin(): what it holds between steps.
  int64_t step_start() const { return start_; }
  // The job's peak bytes in use during the step (its parameters and optimizer state included).
  int64_t step_peak() const { return peak_; }

 private:
  NodePhaseMemory* last_phase_ = nullptr;  // the node pass the next instruction adds to
  NodePhaseMemory before_first_;           // instructions before any node pass
  CachingAllocator& memory_;
  int job_;
  NodeMemoryProfile profile_;
  std::vector<char> seen_forward_, seen_backward_;
  int64_t start_ = 0, in_use_ = 0, peak_ = 0;
};

}  // namespace wt

#include "exec/node_memory_recorder.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "sched/job_placement.hpp"

namespace wt {

namespace {
// `then` following `first`: the pair as one phase.
void append(NodePhaseMemory& first, const NodePhaseMemory& then) {
  first.peak = std::max(first.peak, first.net + then.peak);
  first.net += then.net;
}
}  // namespace

NodeMemoryRecorder::NodeMemoryRecorder(CachingAllocator& memory, int job, int nodes)
    : memory_(memory), job_(job), seen_forward_(size_t(nodes)), seen_backward_(size_t(nodes)) {
  profile_.forward.assign(size_t(nodes), {});
  profile_.backward.assign(size_t(nodes), {});
}

void NodeMemoryRecorder::begin() {
  memory_.reset_peaks();
  start_ = in_use_ = peak_ = int64_t(memory_.job_stats(job_).in_use);
  last_phase_ = nullptr;
  before_first_ = {};
  std::fill(seen_forward_.begin(), seen_forward_.end(), 0);
  std::fill(seen_backward_.begin(), seen_backward_.end(), 0);
}

void NodeMemoryRecorder::executed(int, const Instruction& ins, double, double, int64_t) {
  const JobMemory now = memory_.job_stats(job_);
  const NodePhaseMemory phase{int64_t(now.in_use) - in_use_, int64_t(now.peak_in_use) - in_use_};
  in_use_ = int64_t(now.in_use);
  peak_ = std::max(peak_, int64_t(now.peak_in_use));
  memory_.reset_peaks();  // the next instruction's peak counts from here
  if (!is_node_pass(ins)) {
    append(last_phase_ ? *last_phase_ : before_first_, phase);
    return;
  }
  const bool forward = ins.op == OpCode::Forward;
  NodePhaseMemory& node =
      (forward ? profile_.forward : profile_.backward).at(size_t(ins.node_begin));
  (forward ? seen_forward_ : seen_backward_)[size_t(ins.node_begin)] = 1;
  if (ins.backward_part == BackwardPart::ParamGradient)
    append(node, phase);  // a backward in halves: the second after the first
  else
    node = phase;
  if (!last_phase_) {  // the instructions before the first pass count with it
    NodePhaseMemory first = before_first_;
    append(first, node);
    node = first;
  }
  last_phase_ = &node;
}

NodeMemoryProfile NodeMemoryRecorder::profile() const {
  for (size_t i = 0; i < seen_forward_.size(); ++i)
    if (!seen_forward_[i] || !seen_backward_[i])
      throw std::logic_error("memory profile: node " + std::to_string(i) +
                             "'s forward or backward was not seen as a pass of its own (profile a "
                             "schedule split node by node)");
  return profile_;
}

}  // namespace wt

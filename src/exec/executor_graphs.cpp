// Whole-step graphs in the executor (device.cuda_graphs; docs/cuda-graphs-plan.md). The first
// step runs eagerly (it builds lazy state: optimizer moments, workspaces); the next is captured;
// later ones replay it. A replayed step's host code issues exactly as an eager one (the
// allocator's bookkeeping, the optimizer's counts, the data source's plan), while the device runs
// the captured work (device_backend.hpp). So everything a captured kernel reads must be where it
// was captured and hold this step's values: the batch comes in through fixed pinned buffers
// (BatchSource::set_graph_staging), the labels through one per slot, the step's tensors from the
// graph's own memory (CachingAllocator::begin_graph_capture), and values passed to kernels by
// value must not change: the optimizer's per-step values go through device memory
// (ops/per_step_values.hpp).
#include <cstring>
#include <string>

#include "exec/executor.hpp"
#include "exec/executor_slot.hpp"
#include "sched/opcode_traits.hpp"

namespace wt {

std::string Executor::graphs_refusal() const {
  if (!device_.backend().supports_graphs())
    return std::string("the ") + device_.backend().name() + " device has no graphs";
  for (const auto& stream : rank_program().streams)
    for (const Instruction& ins : stream) {
      if (opcode_traits(ins.op).comm != CommPattern::None && !events_->stream_ordered())
        return "its program communicates (" + ins.str() +
               ") through transfers the host drives (MPI), which a graph cannot hold";
      if (ins.op == OpCode::LoadBatch && ins.rows > 0)
        return "its program reads labels by runs of rows (burst)";
    }
  if (!data_.supports_graph_staging())
    return "its data source cannot copy batches in from fixed buffers";
  // The codec encodes and decodes on the host through staged copies, each with a stream
  // synchronisation inside the transfer (CUDA refuses it in a capture; the strict device, whose
  // transfers run the host kernels, cannot see it).
  if (codec_.active())
    return "its weights travel encoded (compress.weights), which the host encodes and decodes "
           "between synchronisations";
  return "";
}

bool Executor::program_communicates() const {
  for (const RankProgram& rank : program_.ranks)
    for (const auto& stream : rank.streams)
      for (const Instruction& ins : stream)
        if (opcode_traits(ins.op).comm != CommPattern::None) return true;
  return false;
}

void Executor::enable_graphs() {
  if (planted_ != PlantedBug::GraphInputsMoved) data_.set_graph_staging(true);
  // The learning rate and AdamW's corrections through device memory, not baked into the capture.
  if (planted_ != PlantedBug::StaleGraph) optimizer_.use_per_step_values(device_);
  graphs_ = true;
  graphs_communicate_ = program_communicates();
}

Executor::GraphStep Executor::choose_graph_step() const {
  if (!graphs_ || observer_ || eager_steps_ < 1) return GraphStep::Eager;
  return graph_captured_[graph_set_] ? GraphStep::Replay : GraphStep::Capture;
}

void Executor::allow_overlap(bool on) {
  overlap_ = on;
  if (on && !event_sets_[1]) event_sets_[1] = make_program_events();
}

void Executor::choose_graph_set() {
  // With overlap (device.overlap_steps) the step's pinned inputs (batches, labels, dropout state,
  // the optimizer's values) go through one of two sets, alternating by step, and each set has its
  // own graph: the host can write this step's while the device still copies the last one's in.
  // The step before last, which read this set, has been collected: a step runs on for one step
  // only. Without it, one set and one graph.
  const bool two_sets = overlap_ && planted_ != PlantedBug::OverlapOneInputSet;
  graph_set_ = two_sets ? int(step_ & 1) : 0;
  events_ = event_sets_[graph_set_].get();
}

void Executor::check_running_step() {
  if (launched_.empty()) return;
  if (launched_.size() > 1 || !launched_.back().ended)
    throw std::logic_error("executor: step " + std::to_string(step_ + 1) +
                           " begun before an earlier step was collected");
  LaunchedStep& running = launched_.back();
  if (choose_graph_step() != GraphStep::Replay) {
    // Eager or captured work on other streams would not wait for the graph still running (a
    // launch orders only a graph after it): let it finish (a trace window opening, say).
    device_.events().wait(running.done);
    running.waited = true;
    return;
  }
  // The strict device names the race itself; elsewhere nothing would.
  if (running.set == graph_set_ && !device_.backend().checks_ordering())
    throw std::logic_error("executor: step " + std::to_string(step_ + 1) +
                           " would rewrite the pinned inputs of step " +
                           std::to_string(running.step + 1) + ", which still runs");
}

void Executor::begin_graph_step() {
  optimizer_.new_step(graph_set_);
  data_.use_graph_set(graph_set_);
  graph_step_ = choose_graph_step();
  if (graph_step_ == GraphStep::Eager) {
    if (graphs_) ++eager_steps_;
    return;
  }
  // A graphed step starts with no batch held (an eager step's tensors would be freed inside the
  // capture and not inside a replay) and ends the same way (end_graph_step_issue). A capture
  // starts after the previous step's results were read back (a capture's step is never left
  // running, nor the step before it): that, not the capture's fork event, orders the eager steps'
  // work (tick-tock's kept gradients) before the captured one. Replays follow one another on
  // stream 0, each launch after all work before it, a step left running included.
  for (auto& slot : slots_) *slot = Slot(slot->out.size(), slot->stage_samples.size());
  CachingAllocator& memory = device_.allocator();
  if (graph_step_ == GraphStep::Capture) {
    memory.begin_graph_capture(graph_set_);
    device_.backend().begin_graph_capture(graph_set_);
    graph_captured_[graph_set_] = false;
    ++graph_captures_;
  } else {
    memory.begin_graph_replay(graph_set_);
    device_.backend().begin_graph_replay(graph_set_);
    ++graph_replays_;
  }
}

void Executor::end_graph_step_issue() {
  if (graph_step_ == GraphStep::Eager) return;
  for (auto& slot : slots_) *slot = Slot(slot->out.size(), slot->stage_samples.size());
  if (graph_step_ == GraphStep::Capture) {
    device_.backend().end_graph_capture();
    graph_captured_[graph_set_] = true;
  } else {
    device_.backend().end_graph_replay();
  }
}

void Executor::end_graph_step() {
  if (graph_step_ == GraphStep::Eager) return;
  graph_step_ = GraphStep::Eager;
  // After the read-back's synchronisation: the host sees the step's transfers complete (without
  // a query) before their memory is the graph's again.
  events_->poll();
  device_.allocator().end_graph_step();
}

Executor::GraphPinned* Executor::graph_pinned(const Slot& slot) {
  if (!graphs_) return nullptr;
  size_t index = 0;
  while (index < slots_.size() && slots_[index].get() != &slot) ++index;
  if (index == slots_.size()) return nullptr;  // an evaluation's own slot
  if (graph_pinned_.size() < slots_.size()) graph_pinned_.resize(slots_.size());
  return &graph_pinned_[index];
}

const int32_t* Executor::loss_labels(Slot& slot) {
  const std::vector<int32_t>& labels = slot.loss_labels();
  GraphPinned* pinned = graph_pinned(slot);
  if (!pinned) return labels.data();
  const bool moved = planted_ == PlantedBug::GraphLabelsMoved && graph_step_ != GraphStep::Eager;
  const int set = graph_set_;
  for (int s = 0; s < 2; ++s) {  // both sets at once: the eager step's, outside any capture
    const bool move_now = moved && s == set;
    if (pinned->label_count[s] >= labels.size() && !move_now) continue;
    DeviceStreams& streams = device_.events();
    auto* fresh = static_cast<int32_t*>(streams.allocate_pinned(labels.size() * sizeof(int32_t)));
    if (!fresh) throw std::bad_alloc();
    if (pinned->labels[s] && !move_now)
      streams.free_pinned(pinned->labels[s]);  // moved: leaks, for the test
    pinned->labels[s] = fresh;
    pinned->label_count[s] = labels.size();
  }
  if (graph_step_ == GraphStep::Eager) return labels.data();
  // The last step that read this set has been collected (begin_graph_step): rewrite it now.
  std::memcpy(pinned->labels[set], labels.data(), labels.size() * sizeof(int32_t));
  return pinned->labels[set];
}

const uint64_t* Executor::pinned_rng_state(Slot& slot) {
  GraphPinned* pinned = graph_pinned(slot);
  if (!pinned) return nullptr;
  for (uint64_t*& each : pinned->rng_state)  // both sets at once (see loss_labels)
    if (!each) {
      each = static_cast<uint64_t*>(device_.events().allocate_pinned(sizeof(uint64_t)));
      if (!each) throw std::bad_alloc();
    }
  uint64_t* state = pinned->rng_state[graph_set_];
  if (graph_step_ == GraphStep::Eager || planted_ == PlantedBug::GraphDropoutByValue)
    return nullptr;           // by value
  *state = slot.rng.state();  // the same value for every node of the slot's batch
  return state;
}

}  // namespace wt

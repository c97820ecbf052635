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
  return graph_captured_ ? GraphStep::Replay : GraphStep::Capture;
}

void Executor::begin_graph_step() {
  optimizer_.new_step();
  graph_step_ = choose_graph_step();
  if (graph_step_ == GraphStep::Eager) {
    if (graphs_) ++eager_steps_;
    return;
  }
  // A graphed step starts with no batch held (an eager step's tensors would be freed inside the
  // capture and not inside a replay) and ends the same way (end_graph_step_issue). It also starts
  // after the previous step's results were read back (one device synchronisation a step): that,
  // not the capture's fork event, orders the eager steps' work (tick-tock's kept gradients) before
  // the captured one; replays follow one another on stream 0.
  for (auto& slot : slots_) *slot = Slot(slot->out.size(), slot->stage_samples.size());
  CachingAllocator& memory = device_.allocator();
  if (graph_step_ == GraphStep::Capture) {
    memory.begin_graph_capture();
    device_.backend().begin_graph_capture();
    graph_captured_ = false;
    ++graph_captures_;
  } else {
    memory.begin_graph_replay();
    device_.backend().begin_graph_replay();
    ++graph_replays_;
  }
}

void Executor::end_graph_step_issue() {
  if (graph_step_ == GraphStep::Eager) return;
  for (auto& slot : slots_) *slot = Slot(slot->out.size(), slot->stage_samples.size());
  if (graph_step_ == GraphStep::Capture) {
    device_.backend().end_graph_capture();
    graph_captured_ = true;
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
  if (pinned->label_count < labels.size() || moved) {
    DeviceStreams& streams = device_.events();
    auto* fresh = static_cast<int32_t*>(streams.allocate_pinned(labels.size() * sizeof(int32_t)));
    if (!fresh) throw std::bad_alloc();
    if (pinned->labels && !moved)
      streams.free_pinned(pinned->labels);  // moved: leaks, for the test
    pinned->labels = fresh;
    pinned->label_count = labels.size();
  }
  if (graph_step_ == GraphStep::Eager) return labels.data();
  // The previous step's kernels have run (a step ends with a synchronisation): rewrite it now.
  std::memcpy(pinned->labels, labels.data(), labels.size() * sizeof(int32_t));
  return pinned->labels;
}

const uint64_t* Executor::pinned_rng_state(Slot& slot) {
  GraphPinned* pinned = graph_pinned(slot);
  if (!pinned) return nullptr;
  if (!pinned->rng_state) {
    pinned->rng_state = static_cast<uint64_t*>(device_.events().allocate_pinned(sizeof(uint64_t)));
    if (!pinned->rng_state) throw std::bad_alloc();
  }
  if (graph_step_ == GraphStep::Eager || planted_ == PlantedBug::GraphDropoutByValue)
    return nullptr;                       // by value
  *pinned->rng_state = slot.rng.state();  // the same value for every node of the slot's batch
  return pinned->rng_state;
}

}  // namespace wt

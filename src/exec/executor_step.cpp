// The executor's step, in parts (executor.hpp): begin, issue what is ready, finish. run_step
// drives them for one job; the training loop drives several jobs' executors together when they
// are co-located (app/training_loop.cpp).
#include <stdexcept>
#include <string>

#include "exec/executor.hpp"
#include "exec/executor_slot.hpp"
#include "sched/opcode_traits.hpp"

namespace wt {

StepStats Executor::run_step(int64_t step, double lr) {
  begin_step(step, lr);
  issue_step();
  return finish_step();
}

void Executor::issue_step() {
  while (!step_issued())
    if (!issue_ready(false)) wait_for_progress();
}

size_t Executor::step_instructions() const {
  size_t n = 0;
  for (const auto& stream : program_.ranks[rank_].streams) n += stream.size();
  return n;
}

void Executor::begin_step(int64_t step, double lr) {
  issue_began_ = steady_seconds();
  step_ = step;
  lr_ = lr;
  // The last step's transfers are seen complete (a graphed step's only after its read-back's
  // synchronisation), and their held buffers freed, before a capture or replay begins. A step left
  // running (device.overlap_steps) has its own set of events.
  choose_graph_set();
  check_running_step();
  events_->reset();
  begin_graph_step();
  loads_done_ = 0;
  samples_ = 0;
  zero_totals(true);                            // each stream its own, ahead of its loss kernels
  for (size_t s = 0; s < slots_.size(); ++s) {  // the last step's burst rows (its work has run)
    Slot& slot = *slots_[s];
    slot.row_labels.clear();
    for (Tensor& t : slot.relaid_grad) t = Tensor();
    // The batch's dropout generator, also on a rank that loads nothing for this slot (a burst
    // rank running only a middle segment receives its rows).
    if (slot_batch_[s] >= 0)
      slot.rng =
          Rng(seed_).fork(static_cast<uint64_t>(step * program_.global_batches + slot_batch_[s]));
  }
  position_.assign(program_.ranks[rank_].streams.size(), 0);
}

bool Executor::issue_ready(bool just_one) {
  const auto& streams = program_.ranks[rank_].streams;
  bool progressed = false;
  for (const int s : visit_order_) {
    while (position_[s] < streams[s].size()) {
      const Instruction& ins = streams[s][position_[s]];
      // A Wait holds the host (the host device) until its event has completed; on a device with
      // streams it holds its stream instead, and the host only until the event's producer is
      // issued (a CUDA host cannot wait on an event not yet recorded).
      const bool waits = opcode_traits(ins.op).waits_event;
      if (waits && !events_->waitable(ins.event)) {
        if (observer_ && wait_since_[s] < 0) wait_since_[s] = steady_seconds();
        break;
      }
      issue(s, position_[s]++, step_, lr_);
      progressed = true;
      if (just_one) return true;
    }
  }
  return progressed;
}

bool Executor::step_issued() const {
  const auto& streams = program_.ranks[rank_].streams;
  for (size_t s = 0; s < streams.size(); ++s)
    if (position_[s] < streams[s].size()) return false;
  return true;
}

size_t Executor::issued_this_step() const {
  size_t issued = 0;
  for (size_t position : position_) issued += position;
  return issued;
}

StepStats Executor::finish_step() {
  launch_step();
  return collect_step();
}

void Executor::launch_step() {
  const bool graphed = graph_step_ != GraphStep::Eager;
  // A graphed step's results leave as its last work, after every stream's, into its own pinned
  // set: the host reads them after an event, possibly once it has issued the next step.
  if (graphed) {
    if (device_.backend().checks_ordering())  // a name for its messages, not built elsewhere
      device_.backend().describe_issue("the step's end (its results copied out)");
    device_.backend().join_streams(0);
    readback_.copy_async(step_, graph_set_);
  }
  end_graph_step_issue();
  LaunchedStep launched;
  launched.issue_seconds = steady_seconds() - issue_began_;
  launched.step = step_;
  launched.samples = samples_;
  launched.set = graph_set_;
  launched.graph = graph_step_;
  if (graphed) launched.done = device_.events().record(0);
  // A replay may run on while the host issues the next step, whose inputs go through the other
  // pinned set: the graph's memory is the graph's again for that step's bookkeeping now (its
  // frees are poisoned on stream 0, after the step's join).
  if (graph_step_ == GraphStep::Replay && overlap_) {
    graph_step_ = GraphStep::Eager;
    device_.allocator().end_graph_step(false);
    launched.ended = true;
  }
  launched_.push_back(launched);
}

StepStats Executor::collect_step() {
  if (launched_.empty()) throw std::logic_error("collect_step: no step was launched");
  const LaunchedStep launched = launched_.front();
  launched_.pop_front();
  issue_seconds_ = launched.issue_seconds;
  if (launched.ended) {  // left running: wait for its results only
    if (planted_ != PlantedBug::OverlapReadUnwaited && !launched.waited)
      device_.events().wait(launched.done);
    device_.backend().raise_deferred();
    if (!launched_.empty()) ++overlapped_steps_;  // the next step was launched before this read
    return read_totals(launched.step, launched.samples);
  }
  device_.backend().drain([this] { return events_->poll(); });
  events_->poll();  // the host sees the step's transfers complete before it reads anything back
  device_.backend().raise_deferred();
  // The read-back is the step's one synchronisation; a graph's memory is free again only after
  // it (blocks a transfer read on the communication stream are held until then). A graph's
  // collectives are waited for there, unseen by the communicator: the stall watchdog watches it.
  std::unique_ptr<RegionMark> watch;
  if (launched.graph != GraphStep::Eager) {
    if (graphs_communicate_) watch = comm_.watch_region(CommRegion::GraphedStep);
    device_.events().synchronize();  // then its results are in their pinned buffer
  }
  const StepStats totals = read_totals(launched.step, launched.samples);
  watch.reset();
  end_graph_step();
  return totals;
}

const Instruction* Executor::next_instruction(int stream) const {
  const auto& instructions = program_.ranks[rank_].streams[size_t(stream)];
  const size_t at = position_[size_t(stream)];
  return at < instructions.size() ? &instructions[at] : nullptr;
}

void Executor::abandon_step() {
  for (int e = 0; e < program_.events; ++e)
    if (events_->in_flight(e))
      throw std::logic_error("abandon_step: communication is still in flight");
  // Queued work reads the slots.
  device_.backend().drain([this] { return events_->poll(); });
  for (auto& slot : slots_) {
    const size_t nodes = slot->out.size(), stages = slot->stage_samples.size();
    *slot = Slot(nodes, stages);
  }
  for (Model* m : replicas_) m->zero_grads();
  const auto& streams = program_.ranks[rank_].streams;
  for (size_t s = 0; s < streams.size(); ++s) position_[s] = streams[s].size();
  loads_done_ = 0;
  data_.plan(loads_of_step(step_ + 1));
}

void Executor::wait_for_progress() {
  if (!try_progress())
    throw std::logic_error("schedule '" + program_.schedule + "' deadlocked on rank " +
                           std::to_string(rank_) + ": " + describe_blocked());
}

std::string Executor::describe_blocked() const {
  const auto& streams = program_.ranks[rank_].streams;
  std::string out;
  for (size_t s = 0; s < streams.size(); ++s) {
    const Instruction* next = next_instruction(int(s));
    if (!next || !opcode_traits(next->op).waits_event) continue;
    if (!out.empty()) out += "; ";
    out += "stream " + std::to_string(s) + " waits at " + next->str() + " for event " +
           std::to_string(next->event) + ", " + describe_producer(next->event);
  }
  return out.empty() ? "no stream is waiting for an event" : out;
}

std::string Executor::describe_producer(int event) const {
  const auto& streams = program_.ranks[rank_].streams;
  for (size_t s = 0; s < streams.size(); ++s)
    for (size_t i = 0; i < streams[s].size(); ++i) {
      const Instruction& ins = streams[s][i];
      if (!opcode_traits(ins.op).completes_event || ins.event != event) continue;
      std::string who = "which " + ins.str() + " on stream " + std::to_string(s) + " completes";
      if (i >= position_[s]) return who + ", not yet issued";
      if (ins.peer >= 0) return who + ", issued, waiting for rank " + std::to_string(ins.peer);
      if (ins.op != OpCode::Record) {
        std::string members;
        for (int r : program_.groups[size_t(ins.group)])
          if (r != rank_) members += (members.empty() ? "" : ", ") + std::to_string(r);
        return who + ", issued, waiting for rank(s) " + members + " of group " +
               std::to_string(ins.group);
      }
      return who + ", issued";
    }
  return "which no instruction of this rank completes";
}

bool Executor::try_progress() { return device_.backend().run_one() || events_->poll(); }

}  // namespace wt

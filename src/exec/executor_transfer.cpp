// The executor's model-parallel instructions: activations and input gradients between the ranks
// running neighbouring stages of one batch, and a stage's weights and gradients between its owner
// and the other ranks. Each starts a non-blocking operation that completes an event.
#include <stdexcept>
#include <string>

#include "exec/executor.hpp"
#include "exec/executor_slot.hpp"
#include "exec/request_group.hpp"
#include "sched/opcode_traits.hpp"
#include "sched/schedule_registry.hpp"

namespace wt {

namespace {

Shape batch_shape(int64_t n, const Shape& sample) {
  Shape s{n};
  s.insert(s.end(), sample.begin(), sample.end());
  return s;
}

}  // namespace

void Executor::start(int event, BeginTransfer begin, std::vector<Tensor> hold,
                     CompletionWork then) {
  Transfer t;
  t.event = event;
  t.stream = current_stream_;
  t.begin = std::move(begin);
  t.then = std::move(then);
  t.hold = std::move(hold);
  t.accesses = std::move(touches_);
  touches_.clear();
  events_->transfer(std::move(t));
}

void Executor::execute_transfer(const Instruction& ins) {
  Stage& st = replica(ins).stages[ins.stage];
  const auto& nodes = replica(ins).graph.nodes;
  auto check_bytes = [&](const Tensor& t) { check_transfer_bytes(ins, t); };
  switch (ins.op) {
    case OpCode::SendActivation: {
      Tensor t = slots_[ins.slot]->out[st.node_end - 1];
      check_bytes(t);
      comm_touches(ins, t.device_ptr(), t.numel(), false);
      start(ins.event, send(t.device_ptr(), t.numel(), ins), {t});
      break;
    }
    case OpCode::RecvActivation: {
      Slot& slot = *slots_[ins.slot];
      const int64_t n = part_samples(data_.global_batch(), ins.part, ins.parts);
      Tensor& t = slot.out[st.node_begin - 1];
      t = Tensor::empty(batch_shape(n, nodes[st.node_begin - 1].out_shape), model_.allocator(),
                        current_stream_);
      check_bytes(t);
      comm_touches(ins, t.device_ptr(), t.numel(), true);
      start(ins.event, receive(t.device_ptr(), t.numel(), ins));
      break;
    }
    case OpCode::SendGradient: {
      // The stage's input and its gradient belong to the rank that ran the previous stage.
      Slot& slot = *slots_[ins.slot];
      Tensor t = std::move(slot.grad[st.node_begin - 1]);
      slot.out[st.node_begin - 1] = Tensor();
      check_bytes(t);
      comm_touches(ins, t.device_ptr(), t.numel(), false);
      // The buffer lives until the send is done (a CUDA host would record_use it on the
      // communication stream); the planted bug drops it at once.
      std::vector<Tensor> hold;
      if (planted_ != PlantedBug::FreeSentGradient) hold.push_back(t);
      start(ins.event, send(t.device_ptr(), t.numel(), ins), std::move(hold));
      break;
    }
    case OpCode::RecvGradient: {
      Slot& slot = *slots_[ins.slot];
      const Tensor& out = slot.out[st.node_end - 1];
      if (!out.defined())
        throw std::logic_error("schedule '" + program_.schedule + "': " + ins.str() +
                               " before the stage's forward on this rank");
      Tensor& t = slot.grad[st.node_end - 1];
      t = Tensor::empty(out.shape(), model_.allocator(), current_stream_);
      check_bytes(t);
      comm_touches(ins, t.device_ptr(), t.numel(), true);
      start(ins.event, receive(t.device_ptr(), t.numel(), ins));
      break;
    }
    case OpCode::Broadcast:
      execute_broadcast(ins, st);
      break;
    case OpCode::Reduce:
      execute_reduce(ins, st);
      break;
    default:
      throw std::logic_error("execute_transfer: not a transfer");
  }
}

void Executor::check_transfer_bytes(const Instruction& ins, const Tensor& t) const {
  if (static_cast<int64_t>(t.bytes()) != ins.bytes)
    throw std::logic_error("schedule '" + program_.schedule + "' rank " + std::to_string(rank_) +
                           ": " + ins.str() + " but the tensor has " + std::to_string(t.bytes()) +
                           " bytes");
}

Executor::BeginTransfer Executor::send(const float* data, int64_t count, const Instruction& ins) {
  return [this, data, count, peer = ins.peer, tag = ins.tag](const OpsBackend&) {
    return std::unique_ptr<AsyncOperation>(comm_.isend(data, count, peer, tag));
  };
}

Executor::BeginTransfer Executor::reduce(float* data, int64_t count, const Instruction& ins) {
  return [this, data, count, root = ins.root, group = ins.group](const OpsBackend&) {
    return std::unique_ptr<AsyncOperation>(comm_.ireduce_sum(data, count, root, group));
  };
}

Executor::BeginTransfer Executor::receive(float* data, int64_t count, const Instruction& ins) {
  return [this, data, count, peer = ins.peer, tag = ins.tag](const OpsBackend&) {
    return std::unique_ptr<AsyncOperation>(comm_.irecv(data, count, peer, tag));
  };
}

// A stage's values and buffers from its owner (ins.root) to the group.
void Executor::execute_broadcast(const Instruction& ins, Stage& st) {
  st.materialize_values(current_stream_);  // a borrowed stage arrives here (no-op when held)
  broadcast_bytes_ = st.buffer_values.defined() ? int64_t(st.buffer_values.bytes()) : 0;
  const bool encoded = codec_.active() && st.values.defined() &&
                       int64_t(st.values.bytes()) >= std::max<int64_t>(1, codec_.min_bytes);
  const bool root = rank_ == ins.root;
  float* values = st.values.defined() ? st.values.device_ptr() : nullptr;
  float* buffers = st.buffer_values.defined() ? st.buffer_values.device_ptr() : nullptr;
  const int64_t value_count = values ? st.values.numel() : 0;
  const int64_t buffer_count = buffers ? st.buffer_values.numel() : 0;
  comm_touches(ins, values, value_count, !root);
  comm_touches(ins, buffers, buffer_count, !root);
  if (!values && !buffers) return events_->complete(ins.event);
  BeginTransfer encoded_part;
  CompletionWork then;
  std::vector<Tensor> hold;
  if (encoded) encoded_part = broadcast_encoded(ins, st, &then, &hold);
  if (!encoded) broadcast_bytes_ += int64_t(value_count * sizeof(float));
  const int root_rank = ins.root, group = ins.group;
  auto begin = [this, encoded_part, values, value_count, buffers, buffer_count, root_rank,
                group](const OpsBackend& comm) {
    auto all = std::make_unique<RequestGroup>();
    if (encoded_part)
      all->add(encoded_part(comm));
    else if (values)
      all->add(comm_.ibroadcast(values, value_count, root_rank, group));
    if (buffers)  // batch-norm statistics: never encoded
      all->add(comm_.ibroadcast(buffers, buffer_count, root_rank, group));
    return std::unique_ptr<AsyncOperation>(std::move(all));
  };
  start(ins.event, std::move(begin), std::move(hold), std::move(then));
}

// A stage's gradients summed into its owner (ins.root): all of them, or the nodes
// [node_begin, node_end) of one bucket (gang_sync = "master").
void Executor::execute_reduce(const Instruction& ins, Stage& st) {
  int64_t offset = 0, count = st.param_count();
  if (ins.node_begin >= 0) st.span_of(ins.node_begin, ins.node_end, &offset, &count);
  if (count == 0) return events_->complete(ins.event);
  st.materialize_grads(current_stream_);  // a borrowed stage this rank ran no Backward on adds 0
  float* grads = st.grads.device_ptr() + offset;
  // A non-owner's gradients now live in the owner's sum: zeroed on the device once sent, so
  // they do not count twice (a bucket: only its own span, the others may still be in flight).
  CompletionWork zero;
  if (rank_ != ins.root)
    zero = [grads, count](const OpsBackend& comm) { comm.fill(0.0f, grads, count); };
  comm_touches(ins, grads, count, true);
  // A borrowed stage gives the memory back instead, once the reduce is done with it
  // (materialized zeroed when next needed).
  const bool give_back = ins.node_begin < 0 && rank_ != ins.root &&
                         residency_.stages[ins.replica][ins.stage] == Residency::Borrowed;
  if (!give_back) return start(ins.event, reduce(grads, count, ins), {}, std::move(zero));
  std::vector<Tensor> hold{st.grads};
  st.release_grads();
  start(ins.event, reduce(grads, count, ins), std::move(hold));
}

// A stage whose input arrives from another rank may read only the previous node's output: that
// one tensor is what RecvActivation delivers.
void Executor::check_stage_boundaries() const {
  bool point_to_point = false;
  for (const auto& stream : program_.ranks[rank_].streams)
    for (const auto& ins : stream)
      point_to_point = point_to_point || ins.op == OpCode::RecvActivation || is_rows(ins.op);
  if (!point_to_point) return;
  const auto& nodes = model_.graph.nodes;
  for (size_t s = 1; s < model_.stages.size(); ++s) {
    const Stage& st = model_.stages[s];
    for (int n = st.node_begin; n < st.node_end; ++n)
      for (int src : nodes[n].inputs)
        if (src == kGraphInput || src < st.node_begin - 1)
          throw std::invalid_argument("stage " + std::to_string(s) + " (from layer '" +
                                      nodes[st.node_begin].name + "') reads layer '" +
                                      (src == kGraphInput ? "input" : nodes[src].name) +
                                      "' across more than one cut; move the cut");
  }
}

void Executor::prepare_evaluation() {
  // The weights evaluated are a collected step's: none may still be running (the training loop
  // collects the step before an evaluation, StepObserver::must_finish_before_next).
  if (steps_in_flight())
    throw std::logic_error("prepare_evaluation: step " +
                           std::to_string(launched_.front().step + 1) + " still runs");
  run_on_device([this] { gather_owned_stages(); });
}

void Executor::gather_owned_stages() {
  for (Stage& st : model_.stages) st.materialize_values();  // no-op for held stages
  if (comm_.size() == 1) return;
  const auto steppers = stage_steppers(program_, int(model_.stages.size()));
  for (size_t s = 0; s < model_.stages.size(); ++s) {
    // Every rank steps it (data parallel): already current. Otherwise the lowest owner's copy
    // goes to all (burst steps a stage on ranks 0..g-1 only, each holding the same values).
    const std::vector<int>& owners = steppers[s];
    if (owners.empty() || int(owners.size()) == program_.world_size) continue;
    Stage& st = model_.stages[s];
    if (st.values.defined())
      comm_.broadcast(st.values.data(), st.values.numel(), owners.front(), 0);
    if (st.buffer_values.defined())
      comm_.broadcast(st.buffer_values.data(), st.buffer_values.numel(), owners.front(), 0);
  }
}

void Executor::finish_evaluation() {
  for (size_t s = 0; s < model_.stages.size(); ++s)
    if (residency_.stages[0][s] != Residency::Held) model_.stages[s].release_values();
}

}  // namespace wt

#include "exec/executor.hpp"

#include <algorithm>
#include <cstring>
#include <exception>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>

#include "exec/executor_slot.hpp"
#include "exec/node_call.hpp"
#include "mem/caching_allocator.hpp"
#include "ops/input_check.hpp"
#include "ops/portable/rows.hpp"
#include "sched/opcode_traits.hpp"
#include "util/input_error.hpp"

namespace wt {

Executor::Executor(DeviceContext& device, Model& model, Communicator& comm, Optimizer& optimizer,
                   BatchSource& data, Program program, uint64_t seed,
                   std::vector<Model*> more_replicas)
    : model_(model),
      device_(device),
      readback_(model.allocator()),
      comm_(comm),
      optimizer_(optimizer),
      data_(data),
      program_(std::move(program)),
      seed_(seed),
      rank_(comm.rank()) {
  if (program_.world_size != comm_.size())
    throw std::logic_error("program built for " + std::to_string(program_.world_size) +
                           " ranks, running on " + std::to_string(comm_.size()));
  replicas_.push_back(&model_);
  replicas_.insert(replicas_.end(), more_replicas.begin(), more_replicas.end());
  if (static_cast<int>(replicas_.size()) != program_.replicas)
    throw std::logic_error("program '" + program_.schedule + "' needs " +
                           std::to_string(program_.replicas) + " model replicas, given " +
                           std::to_string(replicas_.size()));
  kept_.assign(replicas_.size(), std::vector<Tensor>(model_.stages.size()));
  // Groups beyond the world are created collectively, in program order.
  for (size_t g = 1; g < program_.groups.size(); ++g) comm_.add_group(program_.groups[g]);
  for (int s = 0; s < program_.slots; ++s)
    slots_.push_back(std::make_unique<Slot>(model_.graph.nodes.size(), model_.stages.size()));
  event_sets_[0] = make_program_events();
  events_ = event_sets_[0].get();
  check_stage_boundaries();
  slot_batch_.assign(size_t(program_.slots), -1);
  for (const auto& stream : program_.ranks[rank_].streams)
    for (const Instruction& ins : stream) {
      if (ins.op == OpCode::LoadBatch) loads_.push_back(ins);
      if (is_rows(ins.op) && ins.slot >= 0 && ins.batch >= 0)
        slot_batch_[size_t(ins.slot)] = ins.batch;
    }
  for (const Instruction& load : loads_) slot_batch_[size_t(load.slot)] = -1;  // forked there
  consumers_ = model_.graph.consumers();
  gradient_needed_ = model_.graph.output_gradient_needed();
  residency_ = plan_residency(program_, rank_, static_cast<int>(model_.stages.size()));
  for (size_t r = 0; r < replicas_.size(); ++r)
    for (size_t s = 0; s < model_.stages.size(); ++s) {
      Stage& st = replicas_[r]->stages[s];
      if (residency_.stages[r][s] == Residency::Held)
        st.materialize_storage();
      else
        st.release_storage();  // borrowed ones arrive with their Broadcast
    }

  // An AllReduce followed only by Waits, one of them on its own event, has nothing to overlap
  // with. With a single stream nothing else can run meanwhile either, so the blocking collective
  // is equivalent, and Open MPI's blocking allreduce (coll/tuned) is much faster than its
  // non-blocking one (libnbc): 269k floats over shared memory in ~115 us against ~185 us.
  const auto& streams = program_.ranks[rank_].streams;
  may_block_.resize(streams.size());
  for (size_t s = 0; s < streams.size(); ++s) {
    may_block_[s].assign(streams[s].size(), 0);
    // A communicator that enqueues on the device (NCCL) never blocks the host: it has no
    // blocking fast path to take.
    if (streams.size() != 1 || comm_.native_stream()) continue;
    for (size_t k = 0; k < streams[s].size(); ++k) {
      if (streams[s][k].op != OpCode::AllReduce) continue;
      bool waited = false;
      for (size_t j = k + 1; j < streams[s].size() && streams[s][j].op == OpCode::Wait; ++j)
        waited = waited || streams[s][j].event == streams[s][k].event;
      may_block_[s][k] = waited;
    }
  }
  wait_since_.assign(streams.size(), -1.0);
  visit_order_ = stream_visit_order(program_.ranks[rank_]);
  // A ready more urgent stream runs first, as a GPU's scheduler does.
  const std::vector<int>& priority = program_.ranks[rank_].priority;
  for (size_t s = 0; s < priority.size(); ++s) device_.backend().set_priority(int(s), priority[s]);
  // A synchronisation in the middle of a step (a blocking kernel, a staged copy) waits for
  // queued work that may wait for this executor's transfers: they progress meanwhile.
  device_.backend().set_progress([this] { return events_->poll(); });
  loss_seed_ = Tensor::empty({1}, model_.allocator());
  loss_seed_.fill(1.0f);
  loss_seed_.set_label("the loss seed");
  totals_at_ = readback_.reserve(totals_floats(), "the step's loss and accuracy totals");
  checks_at_ =
      readback_.reserve(kern::kInputCheckFloats * (totals_floats() / 4), "the step's input checks");
}

void Executor::set_guard(NonFiniteGuard* guard) {
  guard_ = guard;
  if (guard_) guard_->use_readback(readback_);  // its counts come back in the totals' copy
}

double* Executor::device_totals(int stream) {
  return reinterpret_cast<double*>(readback_.device_ptr(totals_at_)) + 2 * stream;
}

float* Executor::device_input_check(int stream) {
  return readback_.device_ptr(checks_at_) + kern::kInputCheckFloats * stream;
}

int64_t Executor::totals_floats() const {
  return 4 * int64_t(std::max<size_t>(1, program_.ranks[rank_].streams.size()));
}

void Executor::zero_totals(bool each_on_its_stream) {
  for (int64_t s = 0; s < totals_floats() / 4; ++s) {
    const OpsBackend& ops = device_.ops(each_on_its_stream ? int(s) : 0);
    ops.fill(0.0f, reinterpret_cast<float*>(device_totals(int(s))), 4);   // all bits zero: 0.0
    ops.fill(0.0f, device_input_check(int(s)), kern::kInputCheckFloats);  // none found
  }
}

void Executor::raise_input_checks(const float* staged, int64_t step) {
  for (int64_t s = 0; s < totals_floats() / 4; ++s) {
    kern::InputCheck check;
    std::memcpy(&check, staged + kern::kInputCheckFloats * s, sizeof check);
    if (check.position_plus_one == 0) continue;
    throw InputError(
        data_.name(), 0, "",
        (step >= 0 ? "step " + std::to_string(step) : std::string("evaluation")) + ": " +
            ops::token_id_error(check.value, check.position_plus_one - 1, check.bound));
  }
}

StepStats Executor::read_totals(int64_t step, int64_t samples) {
  const size_t floats = size_t(totals_floats());
  const float* staged = planted_ == PlantedBug::ReadTotalsUnsynced
                            ? readback_.tensor().data() + totals_at_  // the bug: no staged copy
                            : readback_.host(totals_at_, step);
  std::vector<double> sums(floats / 2);
  std::memcpy(sums.data(), staged, sums.size() * sizeof(double));
  raise_input_checks(staged - totals_at_ + checks_at_, step);  // the same copy
  StepStats totals;
  for (size_t s = 0; s + 1 < sums.size(); s += 2) {  // stream by stream: the same on every device
    totals.loss_sum += sums[s];
    totals.correct += sums[s + 1];
  }
  totals.samples = samples;
  return totals;
}

void Executor::comm_touches(const Instruction& ins, const float* ptr, int64_t count, bool write) {
  (void)ins;
  if (!ptr || count <= 0) return;
  touches_.push_back({ptr, size_t(count) * sizeof(float), write,
                      write ? "the transfer's write" : "the transfer's read"});
}

void Executor::run_on_device(const std::function<void()>& work) {
  device_.backend().run_on_device(work, [this] { return events_->poll(); });
}

Executor::~Executor() {
  // A step left running still reads and writes the pinned buffers that go now. After a failure
  // the strict device's queues never run again (running them could raise more); a GPU's would.
  const bool failing = std::uncaught_exceptions() > 0;
  if (!launched_.empty() && (!failing || !device_.backend().checks_ordering())) {
    try {
      device_.events().synchronize();
    } catch (...) {  // a destructor reports nothing: the run's own error is already on its way
    }
  }
  device_.backend().set_progress(nullptr);
  for (GraphPinned& pinned : graph_pinned_)
    for (int set = 0; set < 2; ++set)
      for (void* ptr :
           {static_cast<void*>(pinned.labels[set]), static_cast<void*>(pinned.rng_state[set])})
        if (ptr) device_.events().free_pinned(ptr);
}

std::unique_ptr<ProgramEvents> Executor::make_program_events() {
  auto events = device_.backend().program_events(program_.events, comm_.native_stream());
  events->on_completed([this](int event) {  // a trace's transfer spans end here
    if (!observer_) return;
    // One that completes while it is issued (a blocking one) is told after its executed().
    if (issuing_ && issuing_->event == event && opcode_traits(issuing_->op).completes_event)
      completed_in_issue_ = steady_seconds();
    else
      observer_->completed(event, steady_seconds());
  });
  return events;
}

std::vector<BatchRequest> Executor::loads_of_step(int64_t step) const {
  std::vector<BatchRequest> requests;
  for (const Instruction& ins : loads_) requests.push_back(request_of(ins, step));
  return requests;
}

BatchRequest Executor::request_of(const Instruction& load, int64_t step) const {
  BatchRequest r{step * program_.global_batches + load.batch, load.part, load.parts,
                 load.labels_only};
  r.first_sample = load.sample_begin;
  r.samples = load.rows;
  return r;
}

void Executor::issue(int s, size_t index, int64_t step, double lr) {
  // The instruction's host code runs now, as a CUDA host's would: it allocates, frees and
  // launches its kernels and transfers on the stream. The host device runs each kernel at once;
  // the strict device queues it (device/strict_ops.hpp) and runs it later, in shuffled order.
  const Instruction& ins = program_.ranks[rank_].streams[s][index];
  const double waited_since = wait_since_[s];
  wait_since_[s] = -1;
  const double t0 = !observer_ ? 0 : waited_since >= 0 ? waited_since : steady_seconds();
  current_stream_ = s;
  if (device_.backend().checks_ordering())
    device_.backend().describe_issue(ins.str() + " on stream " + std::to_string(s));
  touches_.clear();
  issuing_ = &ins;
  completed_in_issue_ = -1;
  if (observer_) observer_->issuing(s, ins);
  try {
    execute(ins, step, lr, may_block_[s][index] != 0);
  } catch (const OutOfMemory& e) {  // exit 3 names the instruction, tensor and bytes
    throw OutOfMemory(ins.str() + " on stream " + std::to_string(s) + ": " + e.what(), e.requested);
  } catch (const std::bad_alloc&) {
    throw OutOfMemory(ins.str() + " on stream " + std::to_string(s) +
                      ": out of host memory (std::bad_alloc)");
  } catch (const DeviceLibraryError& e) {  // exit 1 names the instruction, as exit 3 does
    const int64_t bytes = bytes_moved(ins);
    throw DeviceLibraryError(ins.str() + " on stream " + std::to_string(s) +
                             (bytes > 0 ? " (" + std::to_string(bytes) + " bytes)" : "") + ": " +
                             e.what());
  }
  if (residency_.release_values_after[s][index])  // a borrowed stage's last read for now
    replica(ins).stages[ins.stage].release_values();
  device_.backend().raise_deferred();  // a free of this instruction's found unordered
  issuing_ = nullptr;
  if (observer_) observer_->executed(s, ins, t0, steady_seconds(), bytes_moved(ins));
  if (observer_ && completed_in_issue_ >= 0) observer_->completed(ins.event, completed_in_issue_);
}

void Executor::execute(const Instruction& ins, int64_t step, double lr, bool may_block) {
  switch (ins.op) {
    case OpCode::LoadBatch:
      execute_load(ins, step);
      break;
    case OpCode::Forward: {
      require_values(ins);
      if (planted_ == PlantedBug::GraphSyncInStep && graph_step_ != GraphStep::Eager)
        device_.synchronize();
      const Stage& st = model_.stages[ins.stage];
      const float scale = 1.0f / float(data_.global_batch() * program_.global_batches);
      const int b = ins.node_begin < 0 ? st.node_begin : ins.node_begin;
      const int e = ins.node_end < 0 ? st.node_end : ins.node_end;
      Slot& slot = *slots_[ins.slot];
      slot.samples = samples_of(slot, ins.stage);
      forward_nodes(replica(ins), slot, b, e, Mode::Train, scale, false);
      break;
    }
    case OpCode::Backward: {
      require_values(ins);
      // No-op unless borrowed and released.
      replica(ins).stages[ins.stage].materialize_grads(current_stream_);
      const Stage& st = model_.stages[ins.stage];
      const int b = ins.node_begin < 0 ? st.node_begin : ins.node_begin;
      const int e = ins.node_end < 0 ? st.node_end : ins.node_end;
      Slot& slot = *slots_[ins.slot];
      slot.samples = samples_of(slot, ins.stage);
      backward_nodes(replica(ins), slot, {b, e, st.node_begin}, ins.backward_part);
      break;
    }
    case OpCode::AllReduce:
      execute_allreduce(ins, may_block);
      break;
    case OpCode::Wait:  // the stream's later work waits for the event (the host goes on)
      events_->wait(current_stream_, ins.event);
      if (graph_step_ == GraphStep::Capture)
        model_.allocator().graph_wait(current_stream_, ins.event);
      break;
    case OpCode::Step:
      execute_step(ins, step, lr);
      break;
    case OpCode::SendActivation:
    case OpCode::RecvActivation:
    case OpCode::SendGradient:
    case OpCode::RecvGradient:
    case OpCode::Broadcast:
    case OpCode::Reduce:
      execute_transfer(ins);
      break;
    case OpCode::Record:
      events_->record(ins.event, current_stream_);
      if (graph_step_ == GraphStep::Capture)
        model_.allocator().graph_record(ins.event, current_stream_);
      break;
    case OpCode::KeepGradient:
    case OpCode::AddKeptGradient:
      execute_gradient_exchange(ins);
      break;
    case OpCode::SendRows:
    case OpCode::RecvRows:
    case OpCode::CopyRows:
      execute_rows(ins);
      break;
  }
}

void Executor::execute_allreduce(const Instruction& ins, bool may_block) {
  Stage& st = replica(ins).stages[ins.stage];
  int64_t offset = 0, count = 0;
  st.span_of(ins.node_begin, ins.node_end, &offset, &count);
  if (count == 0) return events_->complete(ins.event);
  st.materialize_grads(current_stream_);  // every member of the group takes part
  float* grads = st.grads.device_ptr() + offset;
  comm_touches(ins, grads, count, true);
  const int group = ins.group;
  if (!may_block) {
    start(ins.event, [this, grads, count, group](const OpsBackend&) {
      return std::unique_ptr<AsyncOperation>(comm_.iallreduce_sum(grads, count, group));
    });
    if (planted_ == PlantedBug::HostCopyInAllreduce) clip_on_host(st.grads);          // the bug
    if (planted_ == PlantedBug::WriteDuringTransfer) ops().fill(0.0f, grads, count);  // the bug
    return;
  }
  start(ins.event, [this, grads, count, group](const OpsBackend&) {
    comm_.allreduce_sum(grads, count, group);  // returns done
    return std::unique_ptr<AsyncOperation>(std::make_unique<CompletedOperation>());
  });
}

void Executor::clip_on_host(Tensor& grads) {
  std::vector<float> g = grads.to_host();
  for (float& v : g) v = std::max(-1.0f, std::min(1.0f, v));
  grads.copy_from_host(g.data());
}

void Executor::execute_load(const Instruction& ins, int64_t step) {
  Slot& slot = *slots_[ins.slot];
  const int64_t sequence = step * program_.global_batches + ins.batch;
  // Dropout masks depend only on which samples these are (the batch, each sample's index in
  // it, the node), not on how the batch is cut into parts or ranks.
  slot.rng = Rng(seed_).fork(static_cast<uint64_t>(sequence));
  if (ins.rows > 0) {  // a run of the loss's labels (burst): appended in row order
    std::vector<int32_t> run;
    Tensor none;  // labels only: the slot's input stays
    data_.fetch(request_of(ins, step), none, run);
    slot.row_labels.insert(slot.row_labels.end(), run.begin(), run.end());
  } else {
    data_.fetch(request_of(ins, step), slot.input, slot.labels, current_stream_);
    // Read ahead, the source's buffers come from its own stream's pool: the stream reading the
    // batch must hold the memory back from that pool until it is done with it.
    if (slot.input.defined()) slot.input.record_use(current_stream_);
    slot.first_sample = data_.global_batch() * ins.part / ins.parts;
  }
  // The step's last load: the source reads the next step's while this one computes.
  if (++loads_done_ == loads_.size()) {
    loads_done_ = 0;
    data_.plan(loads_of_step(step + 1));
  }
}

void Executor::execute_step(const Instruction& ins, int64_t step, double lr) {
  Stage& st = replica(ins).stages[ins.stage];
  if (st.param_count() > 0) {
    // Each replica has its own optimizer state.
    const int key = ins.replica * static_cast<int>(model_.stages.size()) + ins.stage;
    // A non-finite gradient skips the update on the device: the host learns of it only after
    // the step (NonFiniteGuard::end_step), never waiting for the device here.
    float* skip = guard_ ? guard_->flag(step, key, st.grads.numel()) : nullptr;
    if (skip) ops().count_nonfinite_into(st.grads.device_ptr(), st.grads.numel(), skip);
    optimizer_.step(key, st.values, st.grads, lr, current_stream_, skip);
    ops().fill(0.0f, st.grads.device_ptr(), st.grads.numel());
  }
}

int64_t Executor::bytes_moved(const Instruction& ins) const {
  switch (ins.op) {
    case OpCode::LoadBatch: {
      const Tensor& x = slots_[ins.slot]->input;
      return x.defined() ? static_cast<int64_t>(x.bytes()) : 0;
    }
    case OpCode::AllReduce: {
      int64_t offset = 0, count = 0;
      model_.stages[ins.stage].span_of(ins.node_begin, ins.node_end, &offset, &count);
      return count * static_cast<int64_t>(sizeof(float));
    }
    case OpCode::Broadcast:  // what went on the wire: encoded words when a codec is on
      return broadcast_bytes_;
    default:  // model-parallel transfers carry their payload size in the instruction
      return ins.bytes > 0 ? ins.bytes : 0;
  }
}

void Executor::execute_gradient_exchange(const Instruction& ins) {
  Stage& st = replica(ins).stages[ins.stage];
  if (!st.grads.defined()) return;
  if (ins.op == OpCode::KeepGradient) {
    Tensor& kept = kept_[ins.replica][ins.stage];
    if (!kept.defined()) {
      kept = Tensor::empty({st.grads.numel()}, model_.allocator(), current_stream_);
      kept.set_label("replica " + std::to_string(ins.replica) + "'s kept gradient of stage " +
                     std::to_string(ins.stage));
    }
    ops().copy(st.grads.device_ptr(), kept.device_ptr(), st.grads.numel());
    return;
  }
  const Tensor& other = kept_[ins.from_replica][ins.stage];
  if (other.defined())
    ops().accumulate(other.device_ptr(), st.grads.device_ptr(), st.grads.numel());
  else
    ops().scale_in_place(2.0f, st.grads.device_ptr(), st.grads.numel());
}

void Executor::forward_nodes(Model& model, Slot& slot, int begin, int end, Mode mode,
                             float loss_scale, bool free_dead) {
  const auto& nodes = model.graph.nodes;
  // Labels, not the input: a later stage's input arrives from another rank. A per-token loss
  // has several labels per sample.
  const std::vector<int32_t>& labels = slot.loss_labels();
  const int64_t n = static_cast<int64_t>(labels.size()) /
                    std::max<int64_t>(1, nodes.back().layer->labels_per_sample());
  // The same for every node of the slot's batch: in a graphed step, written to pinned memory once.
  const int32_t* const device_labels = loss_labels(slot);
  const uint64_t* const rng_state = pinned_rng_state(slot);
  for (int i = begin; i < end; ++i) {
    const Node& node = nodes[i];
    auto& in = in_scratch_;
    in.clear();
    for (int src : node.inputs) in.push_back(&slot.input_of(src));
    LayerContext ctx;
    ctx.mode = mode;
    ctx.rng = &slot.rng;
    ctx.pinned_rng_state = rng_state;
    ctx.first_sample = slot.first_sample;
    ctx.samples = slot.samples;
    ctx.node = i;
    ctx.labels = device_labels;
    ctx.loss_scale = loss_scale;
    ctx.totals = device_totals(current_stream_);
    ctx.input_check = device_input_check(current_stream_);
    ctx.stream = current_stream_;
    ctx.allocator = &model.allocator();
    ctx.ops = &ops();
    ctx.op_takes_scratch = planted_ == PlantedBug::OpScratchAtIssue;
    slot.saved[i] = Saved{};
    call_node(node, "forward", "the forward output and saved tensors", in, [&] {
      if (planted_ == PlantedBug::LibraryFailure && rank_ + 1 == int(program_.ranks.size()))
        throw_planted_library_failure(node.type);
      node.layer->forward(in, slot.out[i], slot.saved[i], ctx);
    });
    if (node.layer->is_loss()) samples_ += n;
    if (free_dead) {
      // Evaluation keeps nothing for backward: drop inputs whose last reader has run.
      slot.saved[i] = Saved{};
      for (int src : node.inputs) {
        if (src == kGraphInput) continue;
        bool needed = false;
        for (int c : consumers_[src]) needed = needed || c > i;
        if (!needed) slot.out[src] = Tensor();
      }
    }
    events_->poll();
  }
}

void Executor::backward_nodes(Model& model, Slot& slot, NodeRange range, BackwardPart part) {
  const auto& nodes = model.graph.nodes;
  const int begin = range.begin, end = range.end;
  if (part != BackwardPart::Whole &&
      (end != begin + 1 || !nodes[size_t(begin)].layer->splits_backward()))
    throw std::logic_error("schedule '" + program_.schedule + "': a backward half of nodes [" +
                           std::to_string(begin) + "," + std::to_string(end) +
                           "), not one node whose layer splits its backward");
  const int32_t* const device_labels = loss_labels(slot);
  for (int i = end - 1; i >= begin; --i) {
    const Node& node = nodes[i];
    const Tensor& dout = node.layer->is_loss() ? loss_seed_ : slot.grad[i];
    if (dout.defined()) {
      auto& in = in_scratch_;
      auto& din = din_scratch_;
      auto& din_ptrs = din_ptr_scratch_;
      in.clear();
      din.assign(node.inputs.size(), Tensor());
      din_ptrs.clear();
      for (size_t k = 0; k < node.inputs.size(); ++k) {
        const int src = node.inputs[k];
        in.push_back(&slot.input_of(src));
        const bool wanted =
            part != BackwardPart::ParamGradient && needs_input_gradient(src, range.stage_begin);
        din_ptrs.push_back(wanted ? &din[k] : nullptr);
      }
      LayerContext ctx;
      ctx.mode = Mode::Train;
      ctx.rng = &slot.rng;
      ctx.first_sample = slot.first_sample;
      ctx.samples = slot.samples;
      ctx.node = i;
      ctx.labels = device_labels;
      ctx.loss_scale = 1.0f / float(data_.global_batch() * program_.global_batches);
      ctx.input_check = device_input_check(current_stream_);
      ctx.stream = current_stream_;
      ctx.allocator = &model.allocator();
      ctx.ops = &ops();
      ctx.op_takes_scratch = planted_ == PlantedBug::OpScratchAtIssue;
      ctx.backward_part = part;
      call_node(node, "backward", "the input gradients", in,
                [&] { node.layer->backward(in, slot.out[i], dout, din_ptrs, slot.saved[i], ctx); });
      // Fan-out: a tensor read by several nodes receives the sum of their gradients.
      for (size_t k = 0; k < node.inputs.size(); ++k) {
        const int src = node.inputs[k];
        if (!din_ptrs[k]) continue;
        Tensor& grad = slot.gradient_of(src);
        if (!grad.defined()) {
          grad = std::move(din[k]);
        } else {
          ops().accumulate(din[k].device_ptr(), grad.device_ptr(), din[k].numel());
        }
      }
      din.clear();  // a summed-in gradient is dead now: give its memory back at once
    }
    // The parameters' half reads them still.
    if (part != BackwardPart::InputGradient || planted_ == PlantedBug::HalvesFreeEarly) {
      slot.out[i] = Tensor();
      slot.saved[i] = Saved{};
      slot.grad[i] = Tensor();
    }
    events_->poll();
  }
  if (part == BackwardPart::InputGradient) return;
  if (begin == 0) slot.input = Tensor();
  // Burst: the stage's re-laid input is dead once the stage's backward is done (its gradient
  // rows still go back).
  if (begin > 0) slot.relaid_out[begin - 1] = Tensor();
}

// An input made inside the Backward's stage whose gradient nothing upstream uses is not computed
// (the graph input never is), also when the stage runs node by node (per_node). One made before
// the stage (another stage's, another segment's) is: a schedule may send it back to that stage's
// rank.
bool Executor::needs_input_gradient(int src, int stage_begin) const {
  if (src == kGraphInput) return false;
  return src < stage_begin || gradient_needed_[size_t(src)];
}

void Executor::require_values(const Instruction& ins) {
  const Stage& st = replica(ins).stages[ins.stage];
  if (st.param_count() > 0 && !st.values.defined())
    throw std::logic_error("schedule '" + program_.schedule + "' rank " + std::to_string(rank_) +
                           ": " + ins.str() +
                           " on a stage this rank does not hold (no Broadcast into it first)");
}

StepStats Executor::evaluate(const Tensor& inputs, const std::vector<int32_t>& labels) {
  for (const Stage& st : model_.stages)
    if (st.param_count() > 0 && !st.values.defined())
      throw std::logic_error(
          "evaluate(): this rank does not hold every stage; call "
          "prepare_evaluation() first");
  const size_t nodes = model_.graph.nodes.size();
  Slot slot(nodes, model_.stages.size());
  slot.input = inputs;
  slot.labels = labels;
  zero_totals(false);  // evaluation runs on stream 0
  samples_ = 0;
  run_on_device([&] {
    current_stream_ = 0;  // between steps: the default stream
    forward_nodes(model_, slot, 0, static_cast<int>(nodes), Mode::Eval, 1.0f, true);
  });
  return read_totals(-1, samples_);  // a fresh copy
}

}  // namespace wt

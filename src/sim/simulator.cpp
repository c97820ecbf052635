#include "sim/simulator.hpp"

#include <algorithm>
#include <map>
#include <queue>
#include <stdexcept>
#include <tuple>

#include "pricing/gradient_sync.hpp"
#include "sched/opcode_traits.hpp"
#include "sched/schedule_registry.hpp"
#include "sched/stage_residency.hpp"

namespace wt {

namespace {

class Simulation {
 public:
  Simulation(const Program& p, const CostModel& c, const SimOptions& o)
      : p_(p), costs_(c), opt_(o), world_(p.world_size) {
    compute_free_.assign(world_, 0.0);
    link_free_.assign(world_, 0.0);
    result_.compute_s.assign(world_, 0.0);
    result_.comm_s.assign(world_, 0.0);
    result_.background_s.assign(world_, 0.0);
    background_until_.assign(world_, 0.0);
    collectives_in_flight_.resize(world_);
    event_time_.assign(world_, std::vector<double>(p.events, -1.0));
    waiters_.assign(world_, std::vector<std::vector<int>>(p.events));
    slot_samples_.assign(world_, std::vector<int64_t>(std::max(1, p.slots), 0));
    streams_.resize(world_);
    collectives_issued_.assign(world_, std::vector<int>(p.groups.size(), 0));
    for (int r = 0; r < world_; ++r)
      for (size_t s = 0; s < p.ranks[r].streams.size(); ++s) {
        stream_ids_.push_back({r, int(s)});
        streams_[r].push_back({0.0, 0});
      }
  }

  SimResult run() {
    add_resident_weights();
    for (size_t id = 0; id < stream_ids_.size(); ++id) ready_.push({0.0, int(id)});
    while (!ready_.empty()) {
      const auto [t, id] = ready_.top();
      ready_.pop();
      advance(id);
    }
    for (int r = 0; r < world_; ++r)
      for (size_t s = 0; s < streams_[r].size(); ++s) {
        if (streams_[r][s].pc < p_.ranks[r].streams[s].size())
          throw std::logic_error("simulated schedule '" + p_.schedule + "' deadlocks: rank " +
                                 std::to_string(r) + " stream " + std::to_string(s) +
                                 " waits forever at " +
                                 p_.ranks[r].streams[s][streams_[r][s].pc].str());
        result_.step_s = std::max(result_.step_s, streams_[r][s].time);
      }
    for (int r = 0; r < world_; ++r) result_.step_s = std::max(result_.step_s, link_free_[r]);
    if (opt_.background_tasklet_s > 0) {  // the idle tail, filled; an overrun delays the step
      double end = result_.step_s;
      for (int r = 0; r < world_; ++r) end = std::max(end, run_background(r, result_.step_s));
      result_.step_s = end;
    }
    result_.samples_per_step = 0;
    for (int j = 0; j < p_.jobs; ++j)
      result_.samples_per_step += global_batch(j) * p_.global_batches;
    finish_memory();
    return std::move(result_);
  }

 private:
  struct StreamState {
    double time;
    size_t pc;
  };
  struct Issue {
    int rank, stream;
    double t;
    const Instruction* ins;
  };

  // Stage weights follow the executor's rule (sched/stage_residency.hpp). Parameters and
  // gradients of every held (replica, stage) stay resident all step, with the optimizer state of
  // those the rank steps, and tick-tock's kept wave gradients; a borrowed stage's parameters count
  // from its Broadcast to their last read, its gradients from its first Backward (or Reduce) until
  // its Reduce completes.
  void add_resident_weights() {
    residency_.clear();
    for (int r = 0; r < world_; ++r) {
      residency_.push_back(plan_residency(p_, r, costs_.stages()));
      borrowed_params_.emplace_back(p_.replicas * costs_.stages(), 0);
      borrowed_grads_.emplace_back(p_.replicas * costs_.stages(), 0);
      std::map<std::pair<int, int>, bool> stepped, kept;
      for (const auto& stream : p_.ranks[r].streams)
        for (const Instruction& ins : stream) {
          if (ins.op == OpCode::Step) stepped[{ins.replica, ins.stage}] = true;
          if (ins.op == OpCode::KeepGradient) kept[{ins.replica, ins.stage}] = true;
        }
      int64_t bytes = 0;
      for (int j = 0; j < p_.jobs; ++j) {  // co-located jobs: each one's own stages
        const CostModel& c = job_costs(j);
        for (int w = 0; w < p_.replicas; ++w)
          for (int st = 0; st < std::min(c.stages(), costs_.stages()); ++st)
            if (residency_[r].stages[w][st] == Residency::Held)
              bytes += c.param_bytes(st) + c.grad_bytes(st) +
                       (stepped.count({w, st}) ? c.optimizer_bytes(st) : 0);
      }
      for (const auto& [key, unused] : kept) bytes += costs_.grad_bytes(key.second);
      memory_delta(r, 0.0, bytes);
    }
  }

  bool borrowed(int rank, const Instruction& ins) const {
    return ins.stage >= 0 && residency_[rank].stages[ins.replica][ins.stage] == Residency::Borrowed;
  }
  // Counts a borrowed stage's parameters (grads = false) or gradients arriving (+) or leaving.
  void borrow(int rank, const Instruction& ins, bool grads, bool held, double t) {
    char& flag = (grads ? borrowed_grads_
                        : borrowed_params_)[rank][ins.replica * costs_.stages() + ins.stage];
    if (!borrowed(rank, ins) || flag == char(held)) return;
    flag = char(held);
    const int64_t bytes = grads ? costs_.grad_bytes(ins.stage) : costs_.param_bytes(ins.stage);
    memory_delta(rank, t, held ? bytes : -bytes);
  }

  void memory_delta(int rank, double t, int64_t delta) { deltas_.push_back({rank, t, delta}); }

  void finish_memory() {
    std::sort(deltas_.begin(), deltas_.end(), [](const Delta& a, const Delta& b) {
      // Frees before allocations at the same instant: a buffer handed over is not counted twice.
      return std::tie(a.rank, a.t, a.bytes) < std::tie(b.rank, b.t, b.bytes);
    });
    result_.peak_bytes.assign(world_, 0);
    std::vector<int64_t> now(world_, 0);
    for (const Delta& d : deltas_) {
      now[d.rank] += d.bytes;
      result_.peak_bytes[d.rank] = std::max(result_.peak_bytes[d.rank], now[d.rank]);
      if (opt_.record_spans) result_.memory.push_back({d.rank, d.t, now[d.rank]});
    }
  }

  void wake(int rank, int event, double t) {
    event_time_[rank][event] = t;
    for (int id : waiters_[rank][event]) ready_.push({t, id});
    waiters_[rank][event].clear();
  }

  void span(int rank, int stream, const Instruction& ins, double t0, double t1) {
    if (opt_.record_spans) result_.spans.push_back({rank, stream, ins, t0, t1});
  }

  // A compute instruction occupies the rank's compute engine from when both it and the stream
  // are free.
  // With overlap_launch, a pass's fixed part (launch_s per node) runs before it takes the engine
  // and leaves the engine to other streams meanwhile; an instruction of no cost (a LoadBatch of a
  // preloaded batch) then takes no turn on the engine either, so another stream's booking of it
  // for after a launch does not hold it back.
  double run_compute(int rank, int stream, const Instruction& ins, double t, double cost) {
    if (opt_.overlap_launch && cost <= 0) {
      span(rank, stream, ins, t, t);
      return t;
    }
    double latency = 0;
    if (opt_.overlap_launch && (ins.op == OpCode::Forward || ins.op == OpCode::Backward))
      latency =
          std::min(cost, job_costs(ins.job).launch_s(ins.stage, ins.node_begin, ins.node_end));
    double begin = std::max(t + latency, compute_free_[rank]);
    if (opt_.background_tasklet_s > 0) begin = std::max(begin, run_background(rank, t));
    const double work = cost - latency;
    compute_free_[rank] = begin + work;
    result_.compute_s[rank] += work;
    span(rank, stream, ins, begin - latency, begin + work);
    return begin + work;
  }

  // Background tasklets in the rank's idle compute before `t` (when its next foreground compute
  // is ready): each starts before t, outside the rank's collectives when they hold it; returns
  // the end of the last one, which the foreground waits for (no preemption).
  double run_background(int rank, double t) {
    double s = std::max(background_until_[rank], compute_free_[rank]);
    while (s < t) {
      bool held = false;
      if (opt_.background_holds_for_allreduce)
        for (const auto& [b, e] : collectives_in_flight_[rank])
          if (b <= s && s < e) {
            s = e;
            held = true;
          }
      if (held) continue;
      s += opt_.background_tasklet_s;
      result_.background_s[rank] += opt_.background_tasklet_s;
    }
    background_until_[rank] = s;
    return s;
  }

  // A transfer among `ranks` that may start at `ready`: it waits for every member's link and
  // occupies them for `cost`. Where communication uses compute (host MPI over shared memory), the
  // cores also spend `cost` copying: it is interleaved with their compute (the executor polls
  // between layers), so it delays their next compute instead of waiting for the current one.
  double run_transfer(const std::vector<int>& ranks, double ready, double cost) {
    double begin = ready;
    for (int r : ranks) begin = std::max(begin, link_free_[r]);
    for (int r : ranks) {
      link_free_[r] = begin + cost;
      result_.comm_s[r] += cost;
      if (costs_.device().comm_uses_compute)
        compute_free_[r] = std::max(compute_free_[r], begin) + cost;
    }
    return begin + cost;
  }

  int64_t slot_samples(int rank, const Instruction& ins) const {
    auto relaid = stage_samples_.find({rank, ins.slot, ins.stage});
    if (relaid != stage_samples_.end()) return relaid->second;
    return ins.slot >= 0 ? slot_samples_[rank][ins.slot] : 0;
  }

  void issue_message(int rank, int stream, double t, const Instruction& ins) {
    const bool send = is_send(ins.op);
    const int from = send ? rank : ins.peer, to = send ? ins.peer : rank;
    auto& [sends, recvs] = messages_[{from, to, ins.tag}];
    (send ? sends : recvs).push_back({rank, stream, t, &ins});
    if (sends.empty() || recvs.empty()) return;
    const Issue s = sends.front(), r = recvs.front();
    sends.erase(sends.begin());
    recvs.erase(recvs.begin());
    const double end =
        run_transfer({from, to}, std::max(s.t, r.t), costs_.message_s(ins.bytes, from, to));
    // Traces show communication from its issue to its completion, as the executor records it.
    span(from, s.stream, *s.ins, s.t, end);
    span(to, r.stream, *r.ins, r.t, end);
    wake(from, s.ins->event, end);
    wake(to, r.ins->event, end);
  }

  double broadcast_s(int stage, const std::vector<int>& group) const {
    const int64_t params = costs_.grad_bytes(stage), all = costs_.param_bytes(stage);
    const WeightCodec& codec = opt_.codec;
    if (!codec.active() || params < std::max<int64_t>(1, codec.min_bytes))
      return costs_.broadcast_s(all, group);
    const int64_t words = 4 * encoded_words(codec, params / 4);
    // Encode reads the values and writes the words; decode the other way round.
    const double codec_s =
        2 * (double(params + words) / costs_.device().memory_bandwidth + costs_.device().launch_s);
    return costs_.broadcast_s(words + all - params, group) + codec_s;
  }

  void issue_collective(int rank, int stream, double t, const Instruction& ins) {
    const int sequence = collectives_issued_[rank][ins.group]++;
    std::vector<Issue>& members = collectives_[{ins.group, sequence}];
    members.push_back({rank, stream, t, &ins});
    const std::vector<int>& group = p_.groups.at(ins.group);
    if (ins.op == OpCode::Broadcast && rank != ins.root)  // the stage's weights arrive here
      borrow(rank, ins, false, true, t);
    if (ins.op == OpCode::Reduce && rank != ins.root)  // zeros, if it ran no backward on it
      borrow(rank, ins, true, true, t);
    if (members.size() < group.size()) return;
    double ready = 0;
    for (const Issue& m : members) ready = std::max(ready, m.t);
    double cost = 0;
    if (ins.op == OpCode::AllReduce)
      cost = bucket_allreduce_s(job_costs(ins.job), ins.stage, ins.node_begin, ins.node_end, group);
    else if (ins.op == OpCode::Broadcast)
      cost = broadcast_s(ins.stage, group);
    else  // Reduce: the stage's gradients, or one bucket's
      cost = costs_.broadcast_s(costs_.grad_bytes(ins.stage, ins.node_begin, ins.node_end), group);
    const double end = run_transfer(group, ready, cost);
    for (const Issue& m : members)  // in flight from the member's issue to the end
      collectives_in_flight_[m.rank].push_back({m.t, end});
    for (const Issue& m : members) {
      span(m.rank, m.stream, *m.ins, m.t, end);
      if (m.ins->op == OpCode::Reduce && m.rank != m.ins->root)  // gradients now on the owner
        borrow(m.rank, *m.ins, true, false, end);
      wake(m.rank, m.ins->event, end);
    }
    collectives_.erase({ins.group, sequence});
  }

  // Co-located jobs (SimOptions::job_costs): each job's own cost model and batch.
  const CostModel& job_costs(int job) const {
    return opt_.job_costs.empty() ? costs_ : *opt_.job_costs.at(size_t(job));
  }
  int64_t global_batch(int job) const {
    return opt_.job_batches.empty() ? opt_.global_batch : opt_.job_batches.at(size_t(job));
  }

  // Runs stream `id` until it blocks on an event or ends; compute instructions yield after each
  // one so the engines are handed out in time order.
  void advance(int id) {
    const auto [rank, stream] = stream_ids_[id];
    StreamState& st = streams_[rank][stream];
    const auto& list = p_.ranks[rank].streams[stream];
    while (st.pc < list.size()) {
      const Instruction& ins = list[st.pc];
      const OpcodeTraits& traits = opcode_traits(ins.op);
      if (traits.waits_event) {
        const double done = event_time_[rank][ins.event];
        if (done < 0) {
          waiters_[rank][ins.event].push_back(id);
          return;
        }
        st.time = std::max(st.time, done);
        ++st.pc;
        continue;
      }
      if (traits.op_class == OpClass::Ordering) {  // Record
        wake(rank, ins.event, st.time);
        ++st.pc;
        continue;
      }
      if (traits.comm == CommPattern::Send || traits.comm == CommPattern::Receive) {
        if (ins.op == OpCode::RecvRows)
          note_relaid_rows(rank, ins);
        else if (traits.comm == CommPattern::Receive)
          slot_samples_[rank][ins.slot] = part_samples(global_batch(ins.job), ins.part, ins.parts);
        ++st.pc;
        issue_message(rank, stream, st.time, ins);
        continue;
      }
      if (traits.comm == CommPattern::Collective) {
        ++st.pc;
        issue_collective(rank, stream, st.time, ins);
        continue;
      }
      issue_compute(rank, stream, st, ins);
      ready_.push({st.time, id});
      return;
    }
  }

  // A compute instruction on this rank's engine, from st.time; st.time becomes its end.
  void issue_compute(int rank, int stream, StreamState& st, const Instruction& ins) {
    double cost = 0;
    const int64_t n = slot_samples(rank, ins);
    int64_t working = 0;  // a Backward's working set, released with its saved activations
    switch (ins.op) {
      case OpCode::LoadBatch:  // labels alone: the slot's samples arrive from a peer
        if (!ins.labels_only)
          slot_samples_[rank][ins.slot] = part_samples(global_batch(ins.job), ins.part, ins.parts);
        // Sharded, the preloader has it ready: no cost on the critical path. Scattered, rank
        // 0's link sends each other rank its part, one after another, before that rank goes on.
        if (opt_.scatter_bytes_per_sample > 0 && ins.parts > 1 && rank != 0)
          st.time = run_transfer(
              {0, rank}, st.time,
              costs_.message_s(opt_.scatter_bytes_per_sample *
                                   part_samples(global_batch(ins.job), ins.part, ins.parts),
                               0, rank));
        break;
      case OpCode::Forward: {
        cost = job_costs(ins.job).forward_s(ins.stage, ins.node_begin, ins.node_end, n);
        const int64_t held =
            job_costs(ins.job).saved_bytes(ins.stage, ins.node_begin, ins.node_end, n);
        memory_delta(rank, std::max(st.time, compute_free_[rank]), held);
        break;
      }
      case OpCode::Backward: {
        cost = job_costs(ins.job).backward_s(ins.stage, ins.node_begin, ins.node_end, n);
        // A half is one of the pass's two products of the same size (dx, dw).
        if (ins.backward_part != BackwardPart::Whole) cost *= 0.5;
        const double begins = std::max(st.time, compute_free_[rank]);
        borrow(rank, ins, true, true, begins);
        working =
            job_costs(ins.job).backward_working_bytes(ins.stage, ins.node_begin, ins.node_end, n);
        // Halves: the working set is taken by the first and held until the second ends.
        if (ins.backward_part != BackwardPart::ParamGradient) memory_delta(rank, begins, working);
        break;
      }
      case OpCode::Step:
        cost = job_costs(ins.job).step_s(ins.stage);
        break;
      case OpCode::KeepGradient:
      case OpCode::AddKeptGradient:
        cost = costs_.gradient_copy_s(ins.stage);
        break;
      case OpCode::CopyRows:
        cost = costs_.memory_copy_s(ins.bytes);
        note_relaid_rows(rank, ins);
        break;
      default:
        throw std::logic_error("simulator: unhandled " + ins.str());
    }
    st.time = run_compute(rank, stream, ins, st.time, cost);
    // Its working set and its part of the saved activations are released (by the second half).
    if (ins.op == OpCode::Backward && ins.backward_part != BackwardPart::InputGradient)
      memory_delta(
          rank, st.time,
          -job_costs(ins.job).saved_bytes(ins.stage, ins.node_begin, ins.node_end, n) - working);
    if (residency_[rank].release_values_after[stream][st.pc])  // a borrowed stage's last read
      borrow(rank, ins, false, false, st.time);
    ++st.pc;
  }

  // Burst: a stage whose input rows were re-laid computes on that many samples.
  void note_relaid_rows(int rank, const Instruction& ins) {
    if (!ins.gradient) stage_samples_[{rank, ins.slot, ins.stage}] = ins.total_rows;
  }

  struct Delta {
    int rank;
    double t;
    int64_t bytes;
  };

  const Program& p_;
  const CostModel& costs_;
  std::vector<ResidencyPlan> residency_;                             // per rank
  std::vector<std::vector<char>> borrowed_params_, borrowed_grads_;  // [rank][replica, stage]
  const SimOptions& opt_;
  const int world_;
  SimResult result_;
  std::vector<double> compute_free_, link_free_;
  std::vector<double> background_until_;  // per rank: where its background tasklets reach
  std::vector<std::vector<std::pair<double, double>>> collectives_in_flight_;  // per rank
  std::vector<std::vector<double>> event_time_;
  std::vector<std::vector<std::vector<int>>> waiters_;
  std::vector<std::vector<int64_t>> slot_samples_;
  std::map<std::tuple<int, int, int>, int64_t> stage_samples_;  // (rank, slot, stage): burst
  std::vector<std::vector<StreamState>> streams_;
  std::vector<std::pair<int, int>> stream_ids_;
  std::vector<std::vector<int>> collectives_issued_;
  std::map<std::tuple<int, int, int>, std::pair<std::vector<Issue>, std::vector<Issue>>> messages_;
  std::map<std::pair<int, int>, std::vector<Issue>> collectives_;
  std::vector<Delta> deltas_;
  using Ready = std::pair<double, int>;  // (stream time, stream id): earliest first
  std::priority_queue<Ready, std::vector<Ready>, std::greater<Ready>> ready_;
};

}  // namespace

SimResult simulate(const Program& program, const CostModel& costs, const SimOptions& options) {
  if (options.global_batch <= 0) throw std::invalid_argument("simulate: global batch must be > 0");
  return Simulation(program, costs, options).run();
}

}  // namespace wt

#include "app/background/background_gate.hpp"

#include "sched/opcode_traits.hpp"

namespace wt {

const char* GateResult::name() const {
  switch (kind) {
    case Admit:
      return "admitted";
    case AdmitLongReceive:
      return "admitted_long_receive";
    case HoldAllreduce:
      return "held_allreduce";
    case HoldSend:
      return "held_send";
    case HoldFeedback:
      return "held_feedback";
    case HoldRunBudget:
      return "held_run_budget";
    case HoldNodeTooLong:
      return "held_node_too_long";
  }
  return "?";
}

BackgroundGate::BackgroundGate(const RankProgram& foreground, const SlowdownFeedback& times,
                               const RunConfig::Background& settings)
    : times_(times),
      feedback_(settings.feedback),
      block_during_allreduce_(settings.block_during_allreduce),
      block_during_send_(settings.block_during_send),
      recv_min_s_(settings.recv_min_ms * 1e-3),
      streams_(int(foreground.streams.size())) {
  for (const auto& stream : foreground.streams)
    for (const Instruction& ins : stream) {
      if (!opcode_traits(ins.op).completes_event || ins.event < 0) continue;
      if (size_t(ins.event) >= producer_.size())
        producer_.resize(size_t(ins.event) + 1, OpCode::Record);
      producer_[size_t(ins.event)] = ins.op;
      if (ins.op == OpCode::AllReduce) allreduces_.push_back(ins.event);
      if (is_send(ins.op)) sends_.push_back(ins.event);
    }
}

OpCode BackgroundGate::producer(int event) const {
  return event >= 0 && size_t(event) < producer_.size() ? producer_[size_t(event)] : OpCode::Record;
}

GateResult BackgroundGate::check(const Executor& foreground) const {
  GateResult result;
  bool long_receive = false;
  for (int s = 0; s < streams_; ++s) {
    const Instruction* wait = foreground.next_instruction(s);
    if (!wait) continue;
    const size_t index = times_.solo().index_of(s, *wait);
    const OpCode waits_on = producer(wait->event);
    if (result.stream < 0) result = {GateResult::Admit, s, index, waits_on};
    const bool receive = is_receive(waits_on) && times_.solo().solo_seconds(s, index) > recv_min_s_;
    if (receive) {
      long_receive = true;
      result = {GateResult::AdmitLongReceive, s, index, waits_on};
    } else if (feedback_ && times_.above_target(s, index) &&
               result.kind != GateResult::HoldFeedback) {
      result = {GateResult::HoldFeedback, s, index, waits_on};
    }
  }
  if (block_during_allreduce_)
    for (int event : allreduces_)
      if (foreground.in_flight(event))
        return {GateResult::HoldAllreduce, result.stream, result.index, OpCode::AllReduce};
  if (block_during_send_)
    for (int event : sends_)
      if (foreground.in_flight(event))
        return {GateResult::HoldSend, result.stream, result.index, producer(event)};
  if (result.kind == GateResult::HoldFeedback && long_receive)
    result.kind = GateResult::AdmitLongReceive;
  return result;
}

}  // namespace wt

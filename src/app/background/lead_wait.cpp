#include "app/background/lead_wait.hpp"

#include "app/background/instruction_times.hpp"
#include "sched/opcode_traits.hpp"

namespace wt {

LeadWait::LeadWait(const RankProgram& program) {
  int stream = -1;
  for (size_t s = 0; s < program.streams.size(); ++s) {
    if (program.streams[s].empty()) continue;
    if (stream >= 0) return;  // several streams: the next compute may come on either
    stream = int(s);
  }
  if (stream < 0) return;
  const auto& instructions = program.streams[size_t(stream)];
  for (size_t i = 0; i < instructions.size(); ++i) {
    const Instruction& ins = instructions[i];
    if (ins.op == OpCode::Wait) {
      for (size_t p = 0; p < i; ++p)  // its receive, posted before it
        if (is_receive(instructions[p].op) && instructions[p].event == ins.event) {
          stream_ = stream;
          index_ = i;
          break;
        }
      return;
    }
    if (ins.op != OpCode::LoadBatch && !is_receive(ins.op)) return;  // compute comes first
  }
}

void LeadWait::step_ended(bool solo, double lead_end) {
  if (solo && arrival_ >= 0 && lead_end > arrival_)
    add_run(runs_, lead_end - arrival_, kRecentRuns);
  arrival_ = -1;  // until this step's arrival says
}

double LeadWait::expected_after_arrival() const {
  return runs_.size() >= kMinRuns ? lower_median(runs_) : -1;
}

}  // namespace wt

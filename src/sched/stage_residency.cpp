#include "sched/stage_residency.hpp"

#include <algorithm>

#include "sched/opcode_traits.hpp"

namespace wt {

namespace {

bool reads_values(OpCode op) { return op == OpCode::Forward || op == OpCode::Backward; }

}  // namespace

std::vector<std::vector<int>> stage_steppers(const Program& program, int stage_count) {
  std::vector<std::vector<int>> steppers(size_t(std::max(stage_count, 0)));
  for (size_t r = 0; r < program.ranks.size(); ++r)
    for (const auto& stream : program.ranks[r].streams)
      for (const Instruction& ins : stream) {
        if (ins.op != OpCode::Step || ins.stage < 0 || ins.stage >= stage_count) continue;
        std::vector<int>& ranks = steppers[size_t(ins.stage)];
        if (ranks.empty() || ranks.back() != int(r)) ranks.push_back(int(r));
      }
  return steppers;
}

bool every_rank_steps_every_stage(const Program& program, int stage_count) {
  for (const std::vector<int>& ranks : stage_steppers(program, stage_count))
    if (ranks.size() != program.ranks.size()) return false;
  return true;
}

ResidencyPlan plan_residency(const Program& program, int rank, int stage_count) {
  const auto& streams = program.ranks.at(rank).streams;
  ResidencyPlan plan;
  plan.stages.assign(program.replicas, std::vector<Residency>(stage_count, Residency::Unused));
  plan.release_values_after.resize(streams.size());
  for (size_t s = 0; s < streams.size(); ++s)
    plan.release_values_after[s].assign(streams[s].size(), 0);

  struct Use {
    bool stepped = false, named = false, broadcast_in = false;
    bool read_before_broadcast = false;  // a Forward/Backward before any Broadcast into it
    int stream = -1;                     // the one stream of its Broadcasts and reads, or -2
  };
  std::vector<std::vector<Use>> use(program.replicas, std::vector<Use>(stage_count));
  for (size_t s = 0; s < streams.size(); ++s)
    for (const Instruction& ins : streams[s]) {
      if (ins.stage < 0 || ins.stage >= stage_count) continue;
      // Only what touches the stage's own state names it (burst's rows name a stage boundary).
      const OpcodeTraits& traits = opcode_traits(ins.op);
      if (((traits.reads | traits.writes) & ~uint32_t(kSlotData)) == 0) continue;
      Use& u = use.at(ins.replica)[ins.stage];
      u.named = true;
      u.stepped = u.stepped || ins.op == OpCode::Step;
      const bool fetch = ins.op == OpCode::Broadcast && ins.root != rank;
      if (!fetch && !reads_values(ins.op)) continue;
      if (reads_values(ins.op) && !u.broadcast_in) u.read_before_broadcast = true;
      u.broadcast_in = u.broadcast_in || fetch;
      u.stream = u.stream == -1 || u.stream == int(s) ? int(s) : -2;
    }

  for (int r = 0; r < program.replicas; ++r)
    for (int st = 0; st < stage_count; ++st) {
      const Use& u = use[r][st];
      Residency& res = plan.stages[r][st];
      if (!u.named) continue;  // Unused
      res = !u.stepped && u.broadcast_in && !u.read_before_broadcast && u.stream >= 0
                ? Residency::Borrowed
                : Residency::Held;
      if (res != Residency::Borrowed) continue;
      // The last read before each later Broadcast, and the last read of the step.
      const auto& stream = streams[u.stream];
      int last_read = -1;
      for (size_t k = 0; k <= stream.size(); ++k) {
        const bool end = k == stream.size();
        if (!end && (stream[k].stage != st || stream[k].replica != r)) continue;
        if (end || stream[k].op == OpCode::Broadcast) {
          if (last_read >= 0) plan.release_values_after[u.stream][last_read] = 1;
          last_read = -1;
        } else if (reads_values(stream[k].op)) {
          last_read = int(k);
        }
      }
    }
  return plan;
}

}  // namespace wt

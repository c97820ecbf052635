// ticktock: Wavelet §3.2 and Appendix B.1, tick-tock data waves. Every rank holds two replicas of
// the whole model and runs two waves on two streams: the tick wave (replica 0) on global batch 0
// of the step and the tock wave (replica 1) on global batch 1, each rank on its own part of each,
// so every (rank, wave, iteration) reads distinct samples. The tock forward starts when the tick
// forward has ended (F0 -> (F1 || B0)): on a device the tock's forward then overlaps the tick's
// backward, filling the memory the tick frees.
//
// Cross-wave synchronisation (Eq. 1): after its backward a wave keeps its local gradient g_m and
// adds the other wave's kept g_{m-1}; the executor scales every loss by 1/(2 B), so this sum is
// Eq. 1's average (g_m + g_{m-1}) / 2. The sum over ranks in the wave's allreduce then gives
// Lemma 1's G_m = sum_i (g_{m-1}^i + g_m^i) / 2N, and the wave's replica steps with it. The tick
// adds the tock's gradient kept in the previous step before the tock keeps this step's; the
// tock adds the tick's gradient of this step. In the very first iteration nothing is kept yet and
// the tick's gradient is used alone (Wavelet: "no need of averaging cross-wave" for g_0).
//
// schedule.wave_offset = false is the baseline Wavelet compares against: the same two replicas in
// lockstep (gang, no offset), both forwards before either backward, so both waves' activations
// are held at once. Only the launch order differs; the gradients (Eq. 1) are the same.
#include <stdexcept>

#include "sched/program_builder.hpp"
#include "sched/schedule_registry.hpp"

namespace wt {

namespace {

Program generate_ticktock(const ScheduleInput& in) {
  if (in.stages.size() != 1)
    throw std::invalid_argument("ticktock runs the whole model in each wave: give it one stage");
  const StageInfo& stage = in.stages[0];
  const int n = in.world_size;
  Program p;
  p.schedule = "ticktock";
  p.world_size = n;
  p.slots = 2;  // slot w holds wave w's batch
  p.global_batches = 2;
  p.replicas = 2;
  const std::vector<int> world = build::world_group(n);
  p.groups = {world, world, world};  // 0: world; 1: the tick wave's allreduce; 2: the tock wave's
  for (int r = 0; r < n; ++r) {
    enum {
      kTickForwardDone,
      kTockForwardDone,  // no offset only
      kTickGradientMixed,
      kTickReduced,
      kTockReduced,
      kEvents
    };
    const bool offset = in.deck.wave_offset;
    std::vector<Instruction> tick, tock;
    auto wave = [&](std::vector<Instruction>& s, int w) {
      Instruction load = build::load(w, w, r, n);
      s.push_back(load);
      Instruction fwd = build::compute(OpCode::Forward, 0, w, w, r, n);
      fwd.replica = w;
      fwd.wave = w;
      s.push_back(fwd);
      if (w == 0 || !offset) {
        Instruction done{OpCode::Record};
        done.event = w == 0 ? kTickForwardDone : kTockForwardDone;
        s.push_back(done);
      }
      // No offset: a wave's backward starts only once both forwards have run (lockstep).
      if (!offset) s.push_back(build::wait(w == 0 ? kTockForwardDone : kTickForwardDone));
      Instruction bwd = build::compute(OpCode::Backward, 0, w, w, r, n);
      bwd.replica = w;
      bwd.wave = w;
      s.push_back(bwd);
      // Eq. 1: the tock mixes in the tick's gradient of this step, so it waits for it.
      if (w == 1) s.push_back(build::wait(kTickGradientMixed));
      Instruction keep{OpCode::KeepGradient};
      keep.stage = 0;
      keep.replica = w;
      keep.wave = w;
      s.push_back(keep);
      Instruction add{OpCode::AddKeptGradient};
      add.stage = 0;
      add.replica = w;
      add.from_replica = 1 - w;
      add.wave = w;
      s.push_back(add);
      if (w == 0) {
        Instruction mixed{OpCode::Record};
        mixed.event = kTickGradientMixed;
        s.push_back(mixed);
      }
      const int reduced = w == 0 ? kTickReduced : kTockReduced;
      if (n > 1) {
        Instruction ar{OpCode::AllReduce};
        ar.stage = 0;
        ar.node_begin = stage.node_begin;
        ar.node_end = stage.node_end;
        ar.group = 1 + w;
        ar.event = reduced;
        ar.replica = w;
        ar.wave = w;
        s.push_back(ar);
        s.push_back(build::wait(reduced));
      }
      Instruction step = build::step(0);
      step.replica = w;
      step.wave = w;
      s.push_back(step);
    };
    wave(tick, 0);
    if (offset) tock.push_back(build::wait(kTickForwardDone));  // launch order: F1 after F0
    wave(tock, 1);
    p.events = n > 1 ? kEvents : kTickReduced;
    p.ranks.push_back(RankProgram{{tick, tock}});
  }
  return p;
}

}  // namespace

WT_REGISTER_SCHEDULE("ticktock", generate_ticktock);

}  // namespace wt

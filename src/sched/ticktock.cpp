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

#include "sched/overlap_groups.hpp"
#include "sched/program_builder.hpp"
#include "sched/schedule_registry.hpp"

namespace wt {

namespace {

// Node groups the tick's backward and the tock's forward are paired in (with the offset).
constexpr int kOverlapGroups = 4;

Instruction record(int event) {
  Instruction i{OpCode::Record};
  i.event = event;
  return i;
}

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
  const bool offset = in.deck.wave_offset;
  // With the offset, the tick's backward and the tock's forward are cut into node groups paired by
  // activation bytes (see the comment on the loop below).
  std::vector<int64_t> bytes = stage.node_activation_bytes;
  if (bytes.empty()) bytes.assign(stage.node_end - stage.node_begin, 1);
  const std::vector<OverlapGroup> pairs = overlap_groups(bytes, stage.node_begin, kOverlapGroups);
  const int k = static_cast<int>(pairs.size());
  enum {
    kTickForwardDone,
    kTockForwardDone,  // no offset only
    kTickGradientMixed,
    kTickReduced,
    kTockReduced,
    kFixedEvents
  };
  auto tick_group_done = [](int g) { return kFixedEvents + g; };
  auto tock_group_done = [k](int g) { return kFixedEvents + k + g; };
  p.events = kFixedEvents + 2 * k;
  for (int r = 0; r < n; ++r) {
    auto compute = [&](OpCode op, int w, int begin = -1, int end = -1) {
      Instruction c = build::compute(op, 0, w, w, r, n);
      c.replica = w;
      c.wave = w;
      c.node_begin = begin;
      c.node_end = end;
      return c;
    };
    // After its backward: Eq. 1 mixing, the wave's allreduce, its replica's step.
    auto finish = [&](std::vector<Instruction>& s, int w) {
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
      if (w == 0) s.push_back(record(kTickGradientMixed));
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

    std::vector<Instruction> tick, tock;
    tick.push_back(build::load(0, 0, r, n));
    tick.push_back(compute(OpCode::Forward, 0));
    tick.push_back(record(kTickForwardDone));
    if (!offset) {
      // Lockstep: each wave's backward starts once both forwards have run, so both waves'
      // activations are held at once.
      tick.push_back(build::wait(kTockForwardDone));
      tick.push_back(compute(OpCode::Backward, 0));
      tock.push_back(build::load(1, 1, r, n));
      tock.push_back(compute(OpCode::Forward, 1));
      tock.push_back(record(kTockForwardDone));
      tock.push_back(build::wait(kTickForwardDone));
    } else {
      // F0 -> (F1 || B0). Left alone, a CPU rank (one thread, each stream run until it blocks)
      // would run the tick's whole backward before the tock's forward (F0 B0 F1 B1: no overlap at
      // all), and a device, running both streams at once, would let the tock's forward allocate
      // faster than the tick's backward frees. So the overlap is spelled out in node groups: the
      // tock's forward group g waits for the tick's backward group g, which has freed at least the
      // bytes forward group g allocates (overlap_groups); the tick's backward group g + 2 waits
      // for the tock's forward group g, so on a device backward group g + 1 and forward group g
      // run side by side, and on a CPU the waves alternate two groups at a time. The peak stays
      // near one wave's activations, where the lockstep order holds two.
      tock.push_back(build::wait(kTickForwardDone));  // launch order: F1 after F0
      tock.push_back(build::load(1, 1, r, n));
      for (int g = 0; g < k; ++g) {
        const OverlapGroup& pair = pairs[g];
        if (g >= 2) tick.push_back(build::wait(tock_group_done(g - 2)));
        tick.push_back(compute(OpCode::Backward, 0, pair.backward_begin, pair.backward_end));
        tick.push_back(record(tick_group_done(g)));
        tock.push_back(build::wait(tick_group_done(g)));
        if (pair.forward_begin < pair.forward_end)
          tock.push_back(compute(OpCode::Forward, 1, pair.forward_begin, pair.forward_end));
        if (g + 2 < k) tock.push_back(record(tock_group_done(g)));
      }
    }
    tock.push_back(compute(OpCode::Backward, 1));
    finish(tick, 0);
    finish(tock, 1);
    p.ranks.push_back(RankProgram{{tick, tock}});
  }
  return p;
}

}  // namespace

WT_REGISTER_SCHEDULE("ticktock", generate_ticktock);

}  // namespace wt

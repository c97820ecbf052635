// gang: classic data parallelism. Every rank runs the whole model on its 1/N part of each global
// batch; gradients are summed in buckets, each bucket's allreduce started as soon as backward has
// produced it, so communication overlaps the rest of backward.
//
// schedule.gang_sync = "master" is ScaleDNN's baseline instead (PyTorch DataParallel): each bucket
// is reduced onto rank 0, rank 0 alone steps (the other ranks hold no optimizer state), and rank 0
// broadcasts the model before every forward (the broadcast a weight codec compresses).
#include <algorithm>
#include <stdexcept>

#include "sched/gradient_buckets.hpp"
#include "sched/program_builder.hpp"
#include "sched/schedule_registry.hpp"

namespace wt {

namespace {

Program generate_gang(const ScheduleInput& in) {
  if (in.stages.size() != 1)
    throw std::invalid_argument("gang runs the whole model on every rank: give it one stage");
  const StageInfo& stage = in.stages[0];
  Program p;
  p.schedule = "gang";
  p.world_size = in.world_size;
  p.slots = 1;
  p.global_batches = 1;
  std::vector<int> world(in.world_size);
  for (int r = 0; r < in.world_size; ++r) world[r] = r;
  p.groups.push_back(world);

  const auto buckets = gradient_buckets(stage, std::max<int64_t>(1, in.deck.bucket_bytes));
  const bool master = in.deck.gang_sync == "master" && in.world_size > 1;
  for (int r = 0; r < in.world_size; ++r) {
    std::vector<Instruction> s;
    int event = 0;
    if (master) s.push_back(build::collective(OpCode::Broadcast, 0, 0, 0, event++));
    Instruction load{OpCode::LoadBatch};
    load.slot = 0;
    load.batch = 0;
    load.part = r;
    load.parts = in.world_size;
    s.push_back(load);
    if (master) s.push_back(build::wait(0));  // the model has arrived
    Instruction fwd{OpCode::Forward};
    fwd.stage = 0;
    fwd.slot = 0;
    s.push_back(fwd);
    const int first_sync = event;
    for (const auto& [b, e] : buckets) {
      Instruction bwd{OpCode::Backward};
      bwd.stage = 0;
      bwd.slot = 0;
      bwd.node_begin = b;
      bwd.node_end = e;
      s.push_back(bwd);
      if (in.world_size > 1) {
        Instruction ar{master ? OpCode::Reduce : OpCode::AllReduce};
        ar.root = master ? 0 : -1;
        ar.stage = 0;
        ar.node_begin = b;
        ar.node_end = e;
        ar.group = 0;
        ar.event = event++;
        s.push_back(ar);
      }
    }
    for (int e = first_sync; e < event; ++e) {
      Instruction w{OpCode::Wait};
      w.event = e;
      s.push_back(w);
    }
    if (!master || r == 0) {
      Instruction step{OpCode::Step};
      step.stage = 0;
      s.push_back(step);
    }
    p.events = event;
    p.ranks.push_back(RankProgram{{s}});
  }
  return p;
}

}  // namespace

WT_REGISTER_SCHEDULE("gang", generate_gang);

}  // namespace wt

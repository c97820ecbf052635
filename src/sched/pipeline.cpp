// pipeline: the model-parallel baselines. N ranks, N stages, rank j owns stage j; activations go
// forward and input gradients backward as point-to-point messages. With microbatches = 1 this is
// vanilla model parallelism; with M > 1 it is GPipe's fill-drain: the global batch is cut into M
// parts and, as in torchgpipe's clock cycles, tick k runs microbatch k - j on stage j (each rank
// takes microbatches in order, and the message dependencies produce the diagonal). Backward runs
// the microbatches in reverse; parameter gradients accumulate over them, and rank j steps stage j.
#include <stdexcept>

#include "sched/program_builder.hpp"
#include "sched/schedule_registry.hpp"

namespace wt {

namespace {

Program generate_pipeline(const ScheduleInput& in) {
  const int n = static_cast<int>(in.stages.size());
  const int m_count = static_cast<int>(in.deck.microbatches);
  if (n != in.world_size)
    throw std::invalid_argument("pipeline needs one stage per rank: " + std::to_string(n) +
                                " stages on " + std::to_string(in.world_size) + " ranks");
  if (in.global_batch <= 0) throw std::invalid_argument("pipeline needs the global batch size");
  if (m_count < 1 || m_count > in.global_batch)
    throw std::invalid_argument("microbatches must be between 1 and the global batch (" +
                                std::to_string(in.global_batch) + ")");
  Program p;
  p.schedule = "pipeline";
  p.world_size = n;
  p.slots = m_count;
  p.global_batches = 1;
  p.groups.push_back(build::world_group(n));
  for (int j = 0; j < n; ++j) {
    std::vector<Instruction> s;
    int event = 0;
    std::vector<int> sends, recvs(m_count, -1);
    auto samples = [&](int m) { return part_samples(in.global_batch, m, m_count); };
    auto recv_act = [&](int m) {
      recvs[m] = event++;
      s.push_back(build::transfer(OpCode::RecvActivation, j, n, m, 0, m, m_count, j - 1,
                                  samples(m) * in.stages[j].in_bytes_per_sample, recvs[m]));
    };
    auto recv_grad = [&](int m) {
      recvs[m] = event++;
      s.push_back(build::transfer(OpCode::RecvGradient, j, n, m, 0, m, m_count, j + 1,
                                  samples(m) * in.stages[j].out_bytes_per_sample, recvs[m]));
    };
    // Forward: fill. A receive is posted one microbatch ahead so it lands while this one runs.
    if (j > 0) recv_act(0);
    for (int m = 0; m < m_count; ++m) {
      if (j > 0 && m + 1 < m_count) recv_act(m + 1);
      if (j == 0) s.push_back(build::load(m, 0, m, m_count));
      if (j > 0) s.push_back(build::wait(recvs[m]));
      if (j == n - 1 && j > 0) s.push_back(build::load(m, 0, m, m_count, true));
      s.push_back(build::compute(OpCode::Forward, j, m, 0, m, m_count));
      if (j < n - 1) {
        sends.push_back(event++);
        s.push_back(build::transfer(OpCode::SendActivation, j, n, m, 0, m, m_count, j + 1,
                                    samples(m) * in.stages[j].out_bytes_per_sample, sends.back()));
      }
    }
    // Backward: drain, last microbatch first.
    if (j < n - 1) recv_grad(m_count - 1);
    for (int m = m_count - 1; m >= 0; --m) {
      if (j < n - 1 && m > 0) recv_grad(m - 1);
      if (j < n - 1) s.push_back(build::wait(recvs[m]));
      s.push_back(build::compute(OpCode::Backward, j, m, 0, m, m_count));
      if (j > 0) {
        sends.push_back(event++);
        s.push_back(build::transfer(OpCode::SendGradient, j, n, m, 0, m, m_count, j - 1,
                                    samples(m) * in.stages[j].in_bytes_per_sample, sends.back()));
      }
    }
    for (int e : sends) s.push_back(build::wait(e));
    s.push_back(build::step(j));
    p.events = std::max(p.events, event);
    p.ranks.push_back(RankProgram{{s}});
  }
  return p;
}

}  // namespace

WT_REGISTER_SCHEDULE("pipeline", generate_pipeline);
WT_SCHEDULE_STAGE_PER_RANK("pipeline", pipeline);

}  // namespace wt

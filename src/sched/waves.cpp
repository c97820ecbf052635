// waves: Wavelet §3.3, round-robin model-partition waves. N ranks, N stages, N global batches in
// flight per step. At forward cycle c rank i runs stage c on batch (i - c) mod N and passes the
// activation to rank i+1 (mod N), which runs stage c+1 on it in cycle c+1. Backward mirrors this in
// reverse stage order, input gradients moving from rank i to rank i-1, so each batch's backward on
// a stage runs where its forward did (its saved state never moves).
//
// Weights: stage s has one owner, rank s, holding its master copy and optimizer state. Every rank
// needs stage c during cycle c, so the owner broadcasts it; stage c+1's broadcast is started at
// the beginning of cycle c (prefetch), and again in the backward cycles. After stage s's backward —
// all ranks finish it in the same cycle (§3.3.3) — its gradients are summed onto the owner, which
// steps it.
#include <stdexcept>

#include "sched/program_builder.hpp"
#include "sched/schedule_registry.hpp"

namespace wt {

namespace {

int mod(int a, int n) { return ((a % n) + n) % n; }

Program generate_waves(const ScheduleInput& in) {
  const int n = static_cast<int>(in.stages.size());
  if (n != in.world_size)
    throw std::invalid_argument("waves needs one stage per rank: " + std::to_string(n) +
                                " stages on " + std::to_string(in.world_size) + " ranks");
  if (in.global_batch <= 0) throw std::invalid_argument("waves needs the global batch size");
  Program p;
  p.schedule = "waves";
  p.world_size = n;
  p.slots = n;  // slot b holds batch b
  p.global_batches = n;
  p.groups.push_back(build::world_group(n));
  const int64_t batch = in.global_batch;
  auto owner = [](int stage) { return stage; };
  for (int i = 0; i < n; ++i) {
    std::vector<Instruction> s;
    int event = 0;
    std::vector<int> fetched(n, -1), reduced(n, -1);
    auto batch_at = [&](int stage) { return mod(i - stage, n); };
    auto fetch = [&](int stage) {
      fetched[stage] = event++;
      s.push_back(build::collective(OpCode::Broadcast, stage, owner(stage), 0, fetched[stage]));
    };
    // Between cycles every rank sends to one neighbour and receives from the other, then computes
    // on what it received. The program must run under MPI's rules and NCCL's (comm_rules.hpp).
    // Under NCCL's a transfer holds its stream until the peer's matching one is issued, and a
    // rank's transfers complete in issue order: a receive posted a cycle ahead would block the
    // compute that produces the neighbour's message, and a ring in which every rank sends first
    // would deadlock. So even ranks send first and odd ranks receive first (a ring of N >= 2 has
    // an odd rank, whose receive releases its neighbour's send, and so on round the ring).
    // The rank then waits for its send and its receive (MPI_Sendrecv's order). Waiting for the
    // send costs nothing — the rank cannot compute before its receive completes either — but keeps
    // it polling until its message is through. Otherwise a rank that finished the cycle last hands
    // its message to MPI and returns to compute, and its neighbour, already waiting for exactly
    // that message, gets it only as fast as the busy sender polls between layers (a 1 MB
    // activation took 4-8 ms that way instead of ~0.3 ms).
    auto exchange = [&](Instruction send, Instruction recv) {
      send.event = event++;
      recv.event = event++;
      if (i % 2 == 0) {
        s.push_back(send);
        s.push_back(recv);
      } else {
        s.push_back(recv);
        s.push_back(send);
      }
      s.push_back(build::wait(send.event));
      s.push_back(build::wait(recv.event));
    };
    // Forward cycles: stage c on batch_at(c), its output to rank i+1, stage c+1's input from i-1.
    if (n > 1) fetch(0);
    for (int c = 0; c < n; ++c) {
      const int b = batch_at(c);
      if (c + 1 < n) fetch(c + 1);  // prefetch the next cycle's weights
      if (c == 0) s.push_back(build::load(b, b, 0, 1));
      if (c == n - 1 && n > 1) s.push_back(build::load(b, b, 0, 1, true));
      if (n > 1) s.push_back(build::wait(fetched[c]));
      s.push_back(build::compute(OpCode::Forward, c, b, b));
      if (c + 1 < n) {
        const int next = batch_at(c + 1);
        exchange(build::transfer(OpCode::SendActivation, c, n, b, b, 0, 1, mod(i + 1, n),
                                 batch * in.stages[c].out_bytes_per_sample, -1),
                 build::transfer(OpCode::RecvActivation, c + 1, n, next, next, 0, 1, mod(i - 1, n),
                                 batch * in.stages[c + 1].in_bytes_per_sample, -1));
      }
    }
    auto reduce = [&](int stage) {
      if (n == 1) return;
      reduced[stage] = event++;
      s.push_back(build::collective(OpCode::Reduce, stage, owner(stage), 0, reduced[stage]));
    };
    // Backward cycles, last stage first: input gradients to rank i-1, from rank i+1.
    for (int st = n - 1; st >= 0; --st) {
      const int b = batch_at(st);
      // Backward is forward's context switching in reverse (§3.3.2): a rank let go of stage
      // st-1's weights after its forward cycle, so it fetches them again, one cycle ahead. That
      // keeps a rank at its own stage plus the current and the next one (stage_residency.hpp)
      // instead of every stage at the turn from forward to backward. The owner steps only after
      // the step's last backward, so the second copy equals the first.
      if (st >= 1) fetch(st - 1);
      if (st < n - 1) {
        reduce(st + 1);  // after the exchange, so as not to slow it: it has the next backward
        // The reduce issued a cycle ago is done by now; waiting for it here lets this rank drop
        // that borrowed stage's gradients at once, so at most two are held (the one in backward
        // and the one being reduced) instead of every stage's until the end of the step.
        if (st + 2 < n) s.push_back(build::wait(reduced[st + 2]));
        s.push_back(build::wait(fetched[st]));
      }
      s.push_back(build::compute(OpCode::Backward, st, b, b));
      if (st > 0) {
        const int next = batch_at(st - 1);
        exchange(build::transfer(OpCode::SendGradient, st, n, b, b, 0, 1, mod(i - 1, n),
                                 batch * in.stages[st].in_bytes_per_sample, -1),
                 build::transfer(OpCode::RecvGradient, st - 1, n, next, next, 0, 1, mod(i + 1, n),
                                 batch * in.stages[st - 1].out_bytes_per_sample, -1));
      }
      if (st == 0) reduce(st);
    }
    // Every transfer was waited for by its exchange.
    for (int st = n - 1; st >= 0; --st) {
      if (n > 1 && st < 2) s.push_back(build::wait(reduced[st]));  // the others were waited for
      if (owner(st) == i) s.push_back(build::step(st));
    }
    // Batch 0 is the tick wave and batches 1..N-1 the tock waves of §3.3.1 (traces show them).
    for (Instruction& ins : s)
      if (ins.batch >= 0) ins.wave = ins.batch;
    p.events = std::max(p.events, event);
    p.ranks.push_back(RankProgram{{s}});
  }
  return p;
}

}  // namespace

WT_REGISTER_SCHEDULE("waves", generate_waves);
WT_SCHEDULE_STAGE_PER_RANK("waves", waves);

}  // namespace wt

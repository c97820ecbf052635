#pragma once
// DeepPool's launch gate for background work (its Manager's DoWork), read off the foreground
// executor when every foreground stream is blocked on a Wait:
//   - never while a foreground allreduce is in flight (block_during_allreduce): on a CPU, MPI
//     progresses a non-blocking collective only inside MPI calls, so background work stretches
//     it, the CPU twin of NCCL's allreduce "more than doubling" beside a background kernel;
//   - never while a foreground send is in flight (block_during_send): its peer waits for the
//     data, and on a CPU a message past the eager limit moves in fragments only while the
//     sender is inside MPI (measured: lenet's 32 KB activation took 1.6 ms instead of 0.17
//     beside a pipeline stage's background tasklets, and the next stage waited for it);
//   - a wait on a receive whose solo time is above recv_min admits whatever the feedback says
//     (the peer is far behind: there is time to fill);
//   - otherwise, hold while a wait's running average is above its target (slowdown feedback).
#include <string>
#include <vector>

#include "app/background/slowdown_feedback.hpp"
#include "deck/run_config.hpp"
#include "exec/executor.hpp"

namespace wt {

struct GateResult {
  // HoldRunBudget, HoldNodeTooLong: the multiplexer's (foreground_first), not the gate's.
  enum Kind {
    Admit,
    AdmitLongReceive,
    HoldAllreduce,
    HoldSend,
    HoldFeedback,
    HoldRunBudget,
    HoldNodeTooLong
  } kind = Admit;
  int stream = -1;   // the foreground wait that decided it (the first stream's otherwise)
  size_t index = 0;  // its position in the stream
  OpCode waits_on = OpCode::Record;  // what produces the event it waits for
  bool admits() const { return kind == Admit || kind == AdmitLongReceive; }
  const char* name() const;
};

class BackgroundGate {
 public:
  // times: the foreground's solo times and averages (the averages unread with feedback off).
  BackgroundGate(const RankProgram& foreground, const SlowdownFeedback& times,
                 const RunConfig::Background& settings);
  // `foreground`: the executor of `foreground` above, with every unfinished stream blocked.
  GateResult check(const Executor& foreground) const;
  // What produces `event` in the foreground's program (Record when nothing does).
  OpCode producer(int event) const;

 private:
  const SlowdownFeedback& times_;
  bool feedback_, block_during_allreduce_, block_during_send_;
  double recv_min_s_;
  std::vector<OpCode> producer_;  // by event
  std::vector<int> allreduces_;   // events that an AllReduce completes
  std::vector<int> sends_;        // events that a send completes
  int streams_;
};

}  // namespace wt

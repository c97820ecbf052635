// The pipeline and waves generators checked as data, and the validator's model-parallel checks
// shown to reject broken programs. No math runs here.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "sched/cycle_table.hpp"
#include "sched/schedule_registry.hpp"
#include "unit/schedule_inputs.hpp"

namespace {

wt::ScheduleInput stages(int n, int microbatches = 1) {
  return wt_test::chain_of_stages(n, n, microbatches);
}

std::vector<wt::Instruction> ops(const wt::Program& p, int rank, wt::OpCode op) {
  std::vector<wt::Instruction> out;
  for (const auto& ins : p.ranks[rank].streams.at(0))
    if (ins.op == op) out.push_back(ins);
  return out;
}

void expect_rejected(const wt::Program& p, int stage_count, const std::string& part) {
  try {
    wt::validate_program(p, stage_count);
    ADD_FAILURE() << "accepted a broken program; expected: " << part;
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

}  // namespace

// Wavelet Figure 10: at forward cycle c rank i runs stage c on batch (i - c) mod N; backward runs
// the stages in reverse, each on the batch whose forward it ran; stage s is stepped by rank s only.
TEST(WavesSchedule, RoundRobinPartitionsAsInWaveletFigure10) {
  const int n = 4;
  const wt::Program p = wt::ScheduleRegistry::generate("waves", stages(n));
  EXPECT_EQ(p.global_batches, n);
  for (int i = 0; i < n; ++i) {
    const auto fwd = ops(p, i, wt::OpCode::Forward);
    const auto bwd = ops(p, i, wt::OpCode::Backward);
    ASSERT_EQ(fwd.size(), size_t(n));
    ASSERT_EQ(bwd.size(), size_t(n));
    for (int c = 0; c < n; ++c) {
      EXPECT_EQ(fwd[c].stage, c) << "rank " << i;
      EXPECT_EQ(fwd[c].batch, ((i - c) % n + n) % n) << "rank " << i << " cycle " << c;
      EXPECT_EQ(bwd[c].stage, n - 1 - c) << "rank " << i;
      EXPECT_EQ(bwd[c].batch, ((i - (n - 1 - c)) % n + n) % n) << "rank " << i;
    }
    // Activations go to the next rank, gradients to the previous one.
    for (const auto& s : ops(p, i, wt::OpCode::SendActivation)) EXPECT_EQ(s.peer, (i + 1) % n);
    for (const auto& s : ops(p, i, wt::OpCode::SendGradient)) EXPECT_EQ(s.peer, (i + n - 1) % n);
    const auto steps = ops(p, i, wt::OpCode::Step);
    ASSERT_EQ(steps.size(), 1u);
    EXPECT_EQ(steps[0].stage, i);  // the owner
  }
}

// Stage c+1's weights are requested before stage c computes (prefetch), and stage s's gradients
// are reduced right after its backward, before the backward of the stage below it.
TEST(WavesSchedule, PrefetchesNextStageAndReducesAfterEachBackward) {
  const wt::Program p = wt::ScheduleRegistry::generate("waves", stages(3));
  const auto& s = p.ranks[1].streams[0];
  auto index_of = [&](wt::OpCode op, int stage) {
    for (size_t k = 0; k < s.size(); ++k)
      if (s[k].op == op && s[k].stage == stage) return k;
    return s.size();
  };
  for (int c = 0; c + 1 < 3; ++c)
    EXPECT_LT(index_of(wt::OpCode::Broadcast, c + 1), index_of(wt::OpCode::Forward, c));
  for (int st = 2; st > 0; --st) {
    EXPECT_GT(index_of(wt::OpCode::Reduce, st), index_of(wt::OpCode::Backward, st));
    EXPECT_LT(index_of(wt::OpCode::Reduce, st), index_of(wt::OpCode::Backward, st - 1));
  }
}

// torchgpipe's clock cycles: with unit-time stages, running each rank's forwards as soon as its
// program order and the activation it waits for allow puts (microbatch m, stage j) at tick m + j.
TEST(PipelineSchedule, GpipeForwardFollowsTheClockCycleTable) {
  const int n = 3, m_count = 4;
  const wt::Program p = wt::ScheduleRegistry::generate("pipeline", stages(n, m_count));
  std::map<std::pair<int, int>, int> tick;  // (stage, microbatch) -> tick
  for (int j = 0; j < n; ++j) {
    int previous = -1;
    std::map<int, int> received_from;  // event -> microbatch of the activation it receives
    int waited_microbatch = -1;
    for (const auto& ins : p.ranks[j].streams[0]) {
      if (ins.op == wt::OpCode::RecvActivation) {
        EXPECT_EQ(ins.peer, j - 1);
        received_from[ins.event] = ins.part;
      }
      if (ins.op == wt::OpCode::Wait && received_from.count(ins.event))
        waited_microbatch = received_from[ins.event];
      if (ins.op != wt::OpCode::Forward) continue;
      const int m = ins.slot;
      int t = previous + 1;
      if (j > 0) {
        ASSERT_EQ(waited_microbatch, m) << "stage " << j << " forward before its input arrived";
        t = std::max(t, tick.at({j - 1, m}) + 1);
      }
      tick[{j, m}] = previous = t;
    }
  }
  for (int j = 0; j < n; ++j)
    for (int m = 0; m < m_count; ++m) EXPECT_EQ(tick.at({j, m}), m + j) << j << "," << m;
}

TEST(PipelineSchedule, BackwardDrainsInReverseAndEachRankStepsItsStage) {
  const wt::Program p = wt::ScheduleRegistry::generate("pipeline", stages(2, 3));
  for (int j = 0; j < 2; ++j) {
    const auto bwd = ops(p, j, wt::OpCode::Backward);
    ASSERT_EQ(bwd.size(), 3u);
    for (int k = 0; k < 3; ++k) EXPECT_EQ(bwd[k].slot, 2 - k);
    const auto steps = ops(p, j, wt::OpCode::Step);
    ASSERT_EQ(steps.size(), 1u);
    EXPECT_EQ(steps[0].stage, j);
  }
  // Microbatch sizes: 16 samples in 3 parts = 5, 5, 6; the messages carry exactly those.
  std::vector<int64_t> bytes;
  for (const auto& s : ops(p, 0, wt::OpCode::SendActivation)) bytes.push_back(s.bytes);
  EXPECT_EQ(bytes, (std::vector<int64_t>{500, 500, 600}));
}

TEST(PipelineSchedule, RefusesAStageCountOtherThanTheRankCount) {
  wt::ScheduleInput in = stages(2);
  in.world_size = 3;
  EXPECT_THROW(wt::ScheduleRegistry::generate("pipeline", in), std::invalid_argument);
  EXPECT_THROW(wt::ScheduleRegistry::generate("waves", in), std::invalid_argument);
  EXPECT_EQ(wt::ScheduleRegistry::stage_count("waves", 8), 8);
  EXPECT_EQ(wt::ScheduleRegistry::stage_count("gang", 8), 1);
}

TEST(ProgramValidation, RejectsMismatchedMessageSize) {
  wt::Program p = wt::ScheduleRegistry::generate("pipeline", stages(2));
  for (auto& ins : p.ranks[1].streams[0])
    if (ins.op == wt::OpCode::RecvActivation) ins.bytes += 4;
  expect_rejected(p, 2, "bytes");
}

TEST(ProgramValidation, RejectsSendWithoutReceive) {
  wt::Program p = wt::ScheduleRegistry::generate("pipeline", stages(2));
  auto& s = p.ranks[0].streams[0];
  for (auto& ins : s)
    if (ins.op == wt::OpCode::SendActivation) ins.tag += 100;  // nobody receives this tag
  expect_rejected(p, 2, "sends but");
}

TEST(ProgramValidation, RejectsAForwardRunTwice) {
  wt::Program p = wt::ScheduleRegistry::generate("waves", stages(2));
  auto& s = p.ranks[0].streams[0];
  const auto fwd = std::find_if(
      s.begin(), s.end(), [](const wt::Instruction& i) { return i.op == wt::OpCode::Forward; });
  s.insert(fwd, *fwd);
  expect_rejected(p, 2, "forward 2 times");
}

// Rank 0 waits for the gradient before sending the activation that rank 1 needs to produce it.
TEST(ProgramValidation, FindsADeadlock) {
  wt::Program p = wt::ScheduleRegistry::generate("pipeline", stages(2));
  auto& s = p.ranks[0].streams[0];
  auto send = std::find_if(s.begin(), s.end(), [](const wt::Instruction& i) {
    return i.op == wt::OpCode::SendActivation;
  });
  const wt::Instruction moved = *send;
  s.erase(send);
  s.insert(s.end() - 1, moved);  // after the backward, just before the step
  expect_rejected(p, 2, "deadlock");
}

TEST(ProgramValidation, RejectsCollectivesInDifferentOrders) {
  wt::Program p = wt::ScheduleRegistry::generate("waves", stages(3));
  auto& s = p.ranks[2].streams[0];
  std::vector<size_t> bcasts;
  for (size_t k = 0; k < s.size(); ++k)
    if (s[k].op == wt::OpCode::Broadcast) bcasts.push_back(k);
  std::swap(s[bcasts[0]].stage, s[bcasts[1]].stage);
  expect_rejected(p, 3, "different collectives");
}

// The cycle table behind --show-schedule: waves on N ranks takes 2N unit cycles, stage s forward
// in cycle s and backward in cycle 2N-1-s on every rank; vanilla model parallelism takes 2N with
// one rank busy per cycle; GPipe with M microbatches takes 2(M+N-1).
TEST(CycleTable, UnitTimeCyclesOfTheModelParallelSchedules) {
  const int n = 4;
  const wt::Program waves = wt::ScheduleRegistry::generate("waves", stages(n));
  const wt::CycleTable t = wt::assign_cycles(waves);
  EXPECT_EQ(t.cycles, 2 * n);
  for (int r = 0; r < n; ++r) {
    const auto& s = waves.ranks[r].streams[0];
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i].op == wt::OpCode::Forward) {
        EXPECT_EQ(t.cycle[r][0][i], s[i].stage);
      }
      if (s[i].op == wt::OpCode::Backward) {
        EXPECT_EQ(t.cycle[r][0][i], 2 * n - 1 - s[i].stage);
      }
    }
  }
  EXPECT_EQ(wt::assign_cycles(wt::ScheduleRegistry::generate("pipeline", stages(n, 1))).cycles,
            2 * n);
  EXPECT_EQ(wt::assign_cycles(wt::ScheduleRegistry::generate("pipeline", stages(n, 3))).cycles,
            2 * (3 + n - 1));
}

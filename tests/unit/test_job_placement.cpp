// Co-located jobs' program transforms (sched/job_placement.hpp): a gang program moved to another
// stream and split node by node is still a valid program that runs every node's forward upwards
// and backward downwards, once each; a two-stream schedule cannot be placed; split_backward halves
// the marked nodes' backward passes (input's gradient, then parameters'), and the validator
// refuses halves out of order, alone or over several nodes.
#include <gtest/gtest.h>

#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "sched/job_placement.hpp"
#include "schedule_inputs.hpp"

namespace {

TEST(JobPlacement, GangOnStreamOneNodeByNode) {
  wt::ScheduleInput in = wt_test::chain_of_stages(1, 1);  // one stage of nodes 0..2
  const wt::Program gang = wt::ScheduleRegistry::generate("gang", in);
  const wt::Program placed = wt::on_stream(wt::per_node(gang, in.stages), 1);
  ASSERT_EQ(placed.ranks[0].streams.size(), 2u);
  EXPECT_TRUE(placed.ranks[0].streams[0].empty());
  std::vector<int> forward, backward;
  for (const wt::Instruction& ins : placed.ranks[0].streams[1]) {
    if (ins.op == wt::OpCode::Forward) forward.push_back(ins.node_begin);
    if (ins.op == wt::OpCode::Backward) backward.push_back(ins.node_begin);
    if (ins.op == wt::OpCode::Forward || ins.op == wt::OpCode::Backward) {
      EXPECT_EQ(ins.node_end, ins.node_begin + 1);
    }
  }
  EXPECT_EQ(forward, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(backward, (std::vector<int>{2, 1, 0}));
  EXPECT_NO_THROW(wt::validate_program(placed, 1, wt::CommRules::Mpi));
  EXPECT_NO_THROW(wt::validate_program(placed, 1, wt::CommRules::Nccl));
  // The rest of the step as generated: only Forward and Backward were split.
  EXPECT_EQ(placed.ranks[0].streams[1].size(), gang.ranks[0].streams[0].size() + 4);
}

// The placed gang program of GangOnStreamOneNodeByNode with node 1's and node 2's backward halved.
wt::Program halved_gang() {
  wt::ScheduleInput in = wt_test::chain_of_stages(1, 1);
  const wt::Program gang = wt::ScheduleRegistry::generate("gang", in);
  return wt::split_backward(wt::on_stream(wt::per_node(gang, in.stages), 1), {0, 1, 1});
}

TEST(JobPlacement, SplitBackwardHalvesTheMarkedNodes) {
  const wt::Program halved = halved_gang();
  std::vector<std::pair<int, wt::BackwardPart>> backward;
  for (const wt::Instruction& ins : halved.ranks[0].streams[1])
    if (ins.op == wt::OpCode::Backward) backward.push_back({ins.node_begin, ins.backward_part});
  using P = wt::BackwardPart;
  const std::vector<std::pair<int, P>> expected = {{2, P::InputGradient},
                                                   {2, P::ParamGradient},
                                                   {1, P::InputGradient},
                                                   {1, P::ParamGradient},
                                                   {0, P::Whole}};
  EXPECT_EQ(backward, expected);
  EXPECT_NO_THROW(wt::validate_program(halved, 1, wt::CommRules::Mpi));
  EXPECT_NO_THROW(wt::validate_program(halved, 1, wt::CommRules::Nccl));
  // Whole-stage passes are left alone: only a one-node pass has halves.
  wt::ScheduleInput in = wt_test::chain_of_stages(1, 1);
  const wt::Program gang = wt::ScheduleRegistry::generate("gang", in);
  EXPECT_EQ(wt::split_backward(gang, {1, 1, 1}).ranks[0].streams[0].size(),
            gang.ranks[0].streams[0].size());
}

// Runs validate_program on halved_gang() changed by `edit` (its stream 1); the error it gives.
std::string validation_error(const std::function<void(std::vector<wt::Instruction>&)>& edit) {
  wt::Program p = halved_gang();
  edit(p.ranks[0].streams[1]);
  try {
    wt::validate_program(p, 1, wt::CommRules::Mpi);
  } catch (const std::logic_error& e) {
    return e.what();
  }
  return "";
}

size_t find_half(const std::vector<wt::Instruction>& s, int node, wt::BackwardPart part) {
  for (size_t i = 0; i < s.size(); ++i)
    if (s[i].op == wt::OpCode::Backward && s[i].node_begin == node && s[i].backward_part == part)
      return i;
  return s.size();
}

// Two micro-batches in flight on one rank (a one-stage pipeline): each slot's halves pair up.
TEST(JobPlacement, HalvesOfSeveralMicroBatchesAreValid) {
  wt::ScheduleInput in = wt_test::chain_of_stages(1, 1, 2);
  const wt::Program pipeline = wt::ScheduleRegistry::generate("pipeline", in);
  const wt::Program halved =
      wt::split_backward(wt::on_stream(wt::per_node(pipeline, in.stages), 0), {1, 1, 1});
  int halves = 0;
  for (const wt::Instruction& ins : halved.ranks[0].streams[0])
    halves += ins.backward_part != wt::BackwardPart::Whole;
  EXPECT_EQ(halves, 2 * 3 * 2);  // 2 micro-batches x 3 nodes x 2 halves
  EXPECT_NO_THROW(wt::validate_program(halved, 1, wt::CommRules::Mpi));
}

TEST(JobPlacement, TheValidatorRefusesHalvesOutOfOrderAloneOrOverSeveralNodes) {
  using P = wt::BackwardPart;
  // The parameters' half moved before the input's.
  std::string e = validation_error([](std::vector<wt::Instruction>& s) {
    std::swap(s[find_half(s, 2, P::InputGradient)], s[find_half(s, 2, P::ParamGradient)]);
  });
  EXPECT_NE(e.find("the parameters' half (dw) not right after its input's (dx)"), std::string::npos)
      << e;
  EXPECT_NE(e.find("nodes=[2,3) half=dw"), std::string::npos) << e;
  // The parameters' half dropped: the input's half alone.
  e = validation_error([](std::vector<wt::Instruction>& s) {
    s.erase(s.begin() + find_half(s, 1, P::ParamGradient));
  });
  EXPECT_NE(e.find("the input's half (dx) not followed at once by its parameters' (dw)"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("nodes=[1,2) half=dx"), std::string::npos) << e;
  // The input's half dropped: the parameters' half without it.
  e = validation_error([](std::vector<wt::Instruction>& s) {
    s.erase(s.begin() + find_half(s, 1, P::InputGradient));
  });
  EXPECT_NE(e.find("the parameters' half (dw) not right after its input's (dx)"), std::string::npos)
      << e;
  // Something between the halves (a Record: any instruction might read the gradients dx left).
  e = validation_error([](std::vector<wt::Instruction>& s) {
    wt::Instruction record{wt::OpCode::Record};
    record.event = 0;
    s.insert(s.begin() + find_half(s, 2, P::ParamGradient), record);
  });
  EXPECT_NE(e.find("the input's half (dx) not followed at once by its parameters' (dw)"),
            std::string::npos)
      << e;
  // A half over two nodes.
  e = validation_error(
      [](std::vector<wt::Instruction>& s) { s[find_half(s, 1, P::InputGradient)].node_begin = 0; });
  EXPECT_NE(e.find("a backward half runs one node"), std::string::npos) << e;
  // Both halves, then the whole pass again: node 2's backward twice.
  e = validation_error([](std::vector<wt::Instruction>& s) {
    wt::Instruction whole = s[find_half(s, 2, P::ParamGradient)];
    whole.backward_part = P::Whole;
    s.insert(s.begin() + find_half(s, 2, P::ParamGradient) + 1, whole);
  });
  EXPECT_NE(e.find("node 2 backward 2 times"), std::string::npos) << e;
}

TEST(JobPlacement, ASchedulesOwnStreamsCannotBePlaced) {
  wt::ScheduleInput in = wt_test::chain_of_stages(1, 1);
  const wt::Program ticktock = wt::ScheduleRegistry::generate("ticktock", in);
  ASSERT_EQ(ticktock.ranks[0].streams.size(), 2u);
  try {
    wt::on_stream(ticktock, 1);
    ADD_FAILURE() << "placed a two-stream schedule";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'ticktock' uses 2"), std::string::npos) << e.what();
  }
}

}  // namespace

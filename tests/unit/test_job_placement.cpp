// Co-located jobs' program transforms (sched/job_placement.hpp): a gang program moved to another
// stream and split node by node is still a valid program that runs every node's forward upwards
// and backward downwards, once each; a two-stream schedule cannot be placed.
#include <gtest/gtest.h>

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

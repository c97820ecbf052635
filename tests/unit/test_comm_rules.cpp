// The opcode traits table, stream priorities, and the validator's two sets of communication rules
// (MPI's and NCCL's), each rule shown to catch a program that only the other set accepts.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "sched/abstract_run.hpp"
#include "sched/event_dependencies.hpp"
#include "sched/opcode_traits.hpp"
#include "sched/schedule_registry.hpp"
#include "unit/schedule_inputs.hpp"

namespace {

wt::Instruction message(wt::OpCode op, int peer, int event, int tag = 0) {
  wt::Instruction ins{op};
  ins.stage = 0;
  ins.slot = 0;
  ins.peer = peer;
  ins.event = event;
  ins.tag = tag;
  ins.bytes = 64;
  return ins;
}
wt::Instruction all_reduce(int event) {
  wt::Instruction ins{wt::OpCode::AllReduce};
  ins.stage = 0;
  ins.group = 0;
  ins.event = event;
  return ins;
}
wt::Instruction wait(int event) {
  wt::Instruction ins{wt::OpCode::Wait};
  ins.event = event;
  return ins;
}

wt::Program two_ranks(int streams) {
  wt::Program p;
  p.world_size = 2;
  p.events = 2;
  p.groups = {{0, 1}};
  p.ranks.resize(2);
  for (auto& r : p.ranks) r.streams.resize(streams);
  return p;
}

// Both ranks send first, then receive, on one stream: MPI's non-blocking sends let both reach
// their receives; under NCCL a send holds its stream until the peer's receive is issued.
wt::Program head_to_head_sends() {
  wt::Program p = two_ranks(1);
  for (int r = 0; r < 2; ++r)
    p.ranks[r].streams[0] = {message(wt::OpCode::SendActivation, 1 - r, 0),
                             message(wt::OpCode::RecvActivation, 1 - r, 1), wait(0), wait(1)};
  return p;
}

// Rank 0 issues a send on stream 0 and an allreduce on stream 1; rank 1 issues the allreduce
// before its receive. Under NCCL rank 0's operations complete in issue order, so the issue order
// on rank 0 decides: stream 0 first deadlocks, stream 1 first (by priority) does not.
wt::Program crossed_issue_order() {
  wt::Program p = two_ranks(2);
  p.ranks[0].streams[0] = {message(wt::OpCode::SendActivation, 1, 0), wait(0)};
  p.ranks[0].streams[1] = {all_reduce(1), wait(1)};
  p.ranks[1].streams[0] = {all_reduce(1), wait(1), message(wt::OpCode::RecvActivation, 0, 0),
                           wait(0)};
  return p;
}

wt::ScheduleInput model_parallel_input(int n) { return wt_test::chain_of_stages(n, n); }

}  // namespace

TEST(OpcodeTraits, OneRowPerOpcodeWithUniqueNames) {
  std::set<std::string> names, enum_names;
  for (int i = 0; i < wt::kOpCodeCount; ++i) {
    const auto op = static_cast<wt::OpCode>(i);
    const wt::OpcodeTraits& t = wt::opcode_traits(op);
    EXPECT_EQ(t.op, op);
    EXPECT_TRUE(names.insert(t.name).second) << t.name;
    EXPECT_TRUE(enum_names.insert(t.enum_name).second) << t.enum_name;
    // Every communication completes an event that some Wait can order on.
    if (t.op_class == wt::OpClass::Communication) {
      EXPECT_TRUE(t.completes_event) << t.name;
    }
    EXPECT_EQ(t.op_class == wt::OpClass::Communication, t.comm != wt::CommPattern::None) << t.name;
  }
  EXPECT_STREQ(wt::opcode_name(wt::OpCode::AllReduce), "allreduce");
  EXPECT_STREQ(wt::opcode_enum_name(wt::OpCode::RecvGradient), "RecvGradient");
  EXPECT_TRUE(wt::is_send(wt::OpCode::SendGradient));
  EXPECT_TRUE(wt::is_receive(wt::OpCode::RecvActivation));
  EXPECT_TRUE(wt::is_collective(wt::OpCode::Broadcast));
  EXPECT_FALSE(wt::is_communication(wt::OpCode::Record));
}

TEST(StreamPriority, VisitOrderIsHighestFirstThenByIndex) {
  wt::RankProgram r;
  r.streams.resize(3);
  EXPECT_EQ(wt::stream_visit_order(r), (std::vector<int>{0, 1, 2}));
  r.priority = {0, 2, 1};
  EXPECT_EQ(wt::stream_visit_order(r), (std::vector<int>{1, 2, 0}));
  r.priority = {1, 0, 1};
  EXPECT_EQ(wt::stream_visit_order(r), (std::vector<int>{0, 2, 1}));
}

TEST(CommRules, HeadToHeadSendsPassMpiButDeadlockUnderNccl) {
  const wt::Program p = head_to_head_sends();
  EXPECT_EQ(wt::find_stuck_streams(p, wt::CommRules::Mpi), "");
  const std::string stuck = wt::find_stuck_streams(p, wt::CommRules::Nccl);
  EXPECT_NE(stuck.find("rank 0 stream 0 at send_act"), std::string::npos) << stuck;
  EXPECT_NE(stuck.find("rank 1 stream 0 at send_act"), std::string::npos) << stuck;
}

TEST(CommRules, NcclCompletesARanksOperationsInIssueOrder) {
  wt::Program p = crossed_issue_order();
  EXPECT_EQ(wt::find_stuck_streams(p, wt::CommRules::Mpi), "");
  EXPECT_NE(wt::find_stuck_streams(p, wt::CommRules::Nccl), "");
  p.ranks[0].priority = {0, 1};  // rank 0 now issues its allreduce first, as rank 1 does
  EXPECT_EQ(wt::find_stuck_streams(p, wt::CommRules::Nccl), "");
}

TEST(CommRules, NcclMatchesAPairsMessagesInOrderWhateverTheirTags) {
  // Two messages from rank 0 to rank 1, received in the other order by tag: MPI matches them by
  // tag; NCCL has no tags, so rank 1's first receive meets rank 0's first send.
  wt::Program p = two_ranks(2);
  p.ranks[0].streams[0] = {message(wt::OpCode::SendActivation, 1, 0, 1),
                           message(wt::OpCode::SendActivation, 1, 1, 2), wait(0), wait(1)};
  p.ranks[1].streams[0] = {message(wt::OpCode::RecvActivation, 0, 0, 2), wait(0),
                           message(wt::OpCode::RecvActivation, 0, 1, 1), wait(1)};
  EXPECT_EQ(wt::find_stuck_streams(p, wt::CommRules::Mpi), "");
  // Under NCCL the pair's first send and first receive match (tags ignored), then the second
  // pair: nothing is stuck, but the matching differs, which the validator's byte check sees.
  EXPECT_EQ(wt::find_stuck_streams(p, wt::CommRules::Nccl), "");
  const auto channel = wt::message_channel(0, p.ranks[0].streams[0][1], wt::CommRules::Nccl);
  EXPECT_EQ(channel, wt::message_channel(1, p.ranks[1].streams[0][0], wt::CommRules::Nccl));
  EXPECT_NE(wt::message_channel(0, p.ranks[0].streams[0][1], wt::CommRules::Mpi),
            wt::message_channel(1, p.ranks[1].streams[0][2], wt::CommRules::Mpi));
}

TEST(CommRules, EveryScheduleIsValidUnderBothRules) {
  for (const std::string kind : {"pipeline", "waves"})
    for (int n : {2, 3, 4, 8}) {
      const wt::Program p = wt::ScheduleRegistry::generate(kind, model_parallel_input(n));
      for (auto rules : {wt::CommRules::Mpi, wt::CommRules::Nccl})
        EXPECT_NO_THROW(wt::validate_program(p, n, rules)) << kind << " on " << n << " ranks";
    }
  for (const std::string kind : {"gang", "ticktock"})
    for (int n : {1, 2, 3, 4, 8}) {
      wt::ScheduleInput in = model_parallel_input(1);
      in.world_size = n;
      const wt::Program p = wt::ScheduleRegistry::generate(kind, in);
      for (auto rules : {wt::CommRules::Mpi, wt::CommRules::Nccl})
        EXPECT_NO_THROW(wt::validate_program(p, 1, rules)) << kind << " on " << n << " ranks";
    }
}

TEST(ProgramValidation, RejectsJobOrPriorityOutOfRange) {
  wt::ScheduleInput in = model_parallel_input(1);
  in.world_size = 2;
  wt::Program p = wt::ScheduleRegistry::generate("gang", in);
  p.ranks[1].streams[0][0].job = 1;
  EXPECT_THROW(wt::validate_program(p, 1), std::logic_error);
  p.jobs = 2;
  // In range; but each job's passes are covered on their own, and job 1 computes nothing.
  try {
    wt::validate_program(p, 1);
    ADD_FAILURE() << "a job that computes nothing passed";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("job 1 stage 0 batch 0: never computed"),
              std::string::npos)
        << e.what();
  }
  p.ranks[1].streams[0][0].job = 0;
  p.jobs = 1;
  EXPECT_NO_THROW(wt::validate_program(p, 1));
  p.ranks[0].priority = {1, 0};  // two priorities for one stream
  EXPECT_THROW(wt::validate_program(p, 1), std::logic_error);
}

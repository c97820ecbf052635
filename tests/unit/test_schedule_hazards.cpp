// The validator's hazard check (sched/hazard_check.hpp): every program every generator emits is
// free of hazards, and each negative test breaks a real generated program the way a generator bug
// would (or, for a send's buffer, builds the smallest program that shows it) and expects the
// refusal to name both instructions.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <string>

#include "exec/schedule_input.hpp"
#include "model/graph.hpp"
#include "sched/program_builder.hpp"
#include "sched/schedule_registry.hpp"
#include "unit/schedule_inputs.hpp"

namespace {

using wt::Instruction;
using wt::OpCode;
using Stream = std::vector<Instruction>;

// The refusal's text; fails the test if the program is accepted.
std::string refusal(const wt::Program& p, int stage_count) {
  for (auto rules : {wt::CommRules::Mpi, wt::CommRules::Nccl}) try {
      wt::validate_program(p, stage_count, rules);
      ADD_FAILURE() << "accepted under " << wt::comm_rules_name(rules) << "'s rules";
    } catch (const std::logic_error& e) {
      return e.what();
    }
  return "";
}

#define EXPECT_HAS(text, part) \
  EXPECT_NE((text).find(part), std::string::npos) << "expected '" << (part) << "' in: " << (text)

size_t index_of(const Stream& s, const std::function<bool(const Instruction&)>& match,
                size_t from = 0) {
  for (size_t i = from; i < s.size(); ++i)
    if (match(s[i])) return i;
  ADD_FAILURE() << "no such instruction";
  return s.size();
}

// Moves s[from] to position `to` of the stream without it.
void move(Stream& s, size_t from, size_t to) {
  const Instruction ins = s[from];
  s.erase(s.begin() + std::ptrdiff_t(from));
  s.insert(s.begin() + std::ptrdiff_t(to), ins);
}

wt::ScheduleInput gang_input(int world, int64_t bucket_bytes, const std::string& sync) {
  wt::ScheduleInput in;
  in.world_size = world;
  in.deck.bucket_bytes = bucket_bytes;
  in.deck.gang_sync = sync;
  in.stages.push_back(wt::StageInfo{0, 6, {100, 0, 300, 0, 50, 0}});
  return in;
}

// Activation bytes like a small VGG (big early layers, small late ones): uneven node groups.
wt::ScheduleInput ticktock_input(int world, bool offset) {
  const std::vector<int64_t> bytes = {100, 100, 100, 100, 25, 50, 50, 50, 12, 25, 6, 6, 1, 0};
  wt::ScheduleInput in;
  in.world_size = world;
  in.deck.wave_offset = offset;
  in.stages.push_back(wt::StageInfo{0, int(bytes.size()), std::vector<int64_t>(bytes.size(), 4)});
  in.stages[0].node_activation_bytes = bytes;
  return in;
}

void expect_valid(const std::string& kind, const wt::ScheduleInput& in, const std::string& what) {
  SCOPED_TRACE(kind + " " + what);
  wt::Program p;
  ASSERT_NO_THROW(p = wt::ScheduleRegistry::generate(kind, in));
  for (auto rules : {wt::CommRules::Mpi, wt::CommRules::Nccl})
    EXPECT_NO_THROW(wt::validate_program(p, int(in.stages.size()), rules));
}

// Every configuration of one schedule the tests and decks use, on the test chain of stages.
void every_configuration(const std::string& kind) {
  if (kind == "gang") {
    for (int world : {1, 2, 3, 4, 8})
      for (int64_t bucket : {1, 200, 1000, 1 << 30})
        for (const char* sync : {"allreduce", "master"})
          expect_valid(
              kind, gang_input(world, bucket, sync),
              std::to_string(world) + " ranks bucket " + std::to_string(bucket) + " " + sync);
  } else if (kind == "ticktock") {
    for (int world : {1, 2, 3, 4})
      for (bool offset : {true, false})
        expect_valid(kind, ticktock_input(world, offset),
                     std::to_string(world) + " ranks offset " + std::to_string(offset));
  } else if (kind == "pipeline" || kind == "waves") {
    for (int n : {1, 2, 3, 4, 8})
      for (int m : {1, 2, 3, 4})
        if (kind == "pipeline" || m == 1)
          expect_valid(kind, wt_test::chain_of_stages(n, n, m),
                       std::to_string(n) + " ranks " + std::to_string(m) + " microbatches");
  } else if (kind == "burst") {
    const std::vector<std::vector<int>> plans = {
        {1}, {2}, {4}, {4, 2}, {2, 4}, {1, 4, 2}, {4, 1, 4}, {2, 2, 1, 4}, {4, 4, 4, 4}};
    for (int world : {1, 2, 4})
      for (const auto& plan : plans) {
        if (*std::max_element(plan.begin(), plan.end()) > world) continue;
        wt::ScheduleInput in = wt_test::chain_of_stages(int(plan.size()), world);
        in.stage_ranks = plan;
        in.deck.bucket_bytes = 200;
        expect_valid(kind, in, std::to_string(world) + " ranks, " + std::to_string(plan.size()));
      }
  } else {
    ADD_FAILURE() << "schedule '" << kind << "' has no configurations in this test: add them";
  }
}

}  // namespace

TEST(HazardCheck, EveryGeneratorsProgramsAreFreeOfHazards) {
  for (const std::string& kind : wt::ScheduleRegistry::known_kinds()) every_configuration(kind);
}

// Real models' node counts, parameter and activation bytes: uneven buckets and node groups.
TEST(HazardCheck, RealModelsProgramsAreFreeOfHazards) {
  for (const char* model : {"mlp", "lenet", "resnet", "transformer_small"}) {
    const wt::Graph graph =
        wt::Graph::load(std::string(WT_SOURCE_DIR) + "/models/" + model + ".toml");
    const int nodes = int(graph.nodes.size());
    for (const std::string kind : {"gang", "ticktock", "pipeline", "waves", "burst"})
      for (int world : {1, 2, 4}) {
        const int stages = kind == "gang" || kind == "ticktock" ? 1 : std::min(world, nodes);
        std::vector<int> cuts;
        for (int s = 1; s < stages; ++s) cuts.push_back(nodes * s / stages);
        wt::ScheduleOptions options;
        options.bucket_bytes = 4096;
        options.microbatches = kind == "pipeline" ? 2 : 1;
        wt::ScheduleInput in = wt::make_schedule_input(graph, cuts, options, 32, world);
        if (kind == "burst") in.stage_ranks.assign(size_t(stages), world);
        if (kind == "burst" && stages > 1) in.stage_ranks[1] = 1;
        expect_valid(kind, in, std::string(model) + " on " + std::to_string(world) + " ranks");
      }
  }
}

// gang with the optimizer step emitted before the Wait on a gradient bucket's allreduce.
TEST(HazardCheck, RefusesAStepBeforeTheAllReducesWait) {
  wt::Program p = wt::ScheduleRegistry::generate("gang", gang_input(2, 1, "allreduce"));
  for (wt::RankProgram& rank : p.ranks) {
    Stream& s = rank.streams[0];
    const size_t step = index_of(s, [](const Instruction& i) { return i.op == OpCode::Step; });
    move(s, step, step - 1);  // before the last Wait
  }
  const Stream& s = p.ranks[0].streams[0];
  const Instruction& wait = s.back();
  ASSERT_EQ(wait.op, OpCode::Wait);
  const Instruction& allreduce = s[index_of(
      s, [&](const Instruction& i) { return i.op == OpCode::AllReduce && i.event == wait.event; })];
  const std::string e = refusal(p, 1);
  EXPECT_HAS(e, "rank 0: step stage=0 (stream 0) reads stage 0's gradients of nodes");
  EXPECT_HAS(e, allreduce.str() + " (stream 0) may still be writing");
  EXPECT_HAS(e, "wait on event " + std::to_string(wait.event) + " first");
}

// gang_sync = "master": rank 0's Wait on its broadcast of the model moved after its Step, which
// overwrites the values the broadcast may still be sending. The other ranks' forwards read the
// values only after the broadcast is waited on; the root's own forward may read them earlier.
TEST(HazardCheck, RefusesAStepWhileTheRootStillBroadcasts) {
  wt::Program p = wt::ScheduleRegistry::generate("gang", gang_input(2, 1, "master"));
  Stream& s = p.ranks[0].streams[0];
  ASSERT_EQ(s.front().op, OpCode::Broadcast);
  const Instruction broadcast = s.front();
  move(s,
       index_of(s,
                [&](const Instruction& i) {
                  return i.op == OpCode::Wait && i.event == broadcast.event;
                }),
       s.size() - 1);
  const std::string e = refusal(p, 1);
  EXPECT_HAS(e, "rank 0: step stage=0 (stream 0) writes stage 0's values that " + broadcast.str() +
                    " (stream 0) may still be reading: wait on event 0 first");
}

// waves with the Wait on a received activation moved after the forward that reads it.
TEST(HazardCheck, RefusesAForwardBeforeItsReceivedActivationsWait) {
  wt::Program p = wt::ScheduleRegistry::generate("waves", wt_test::chain_of_stages(3, 3));
  Stream& s = p.ranks[1].streams[0];
  const size_t recv =
      index_of(s, [](const Instruction& i) { return i.op == OpCode::RecvActivation; });
  const Instruction received = s[recv];
  const size_t wait = index_of(
      s, [&](const Instruction& i) { return i.op == OpCode::Wait && i.event == received.event; });
  const size_t forward = index_of(s, [&](const Instruction& i) {
    return i.op == OpCode::Forward && i.slot == received.slot && i.stage == received.stage;
  });
  move(s, wait, forward);  // just after the forward
  const std::string e = refusal(p, 3);
  EXPECT_HAS(e, "rank 1: " + s[forward - 1].str() + " (stream 0) reads slot " +
                    std::to_string(received.slot) + "'s activation entering stage " +
                    std::to_string(received.stage));
  EXPECT_HAS(e, received.str() + " (stream 0) may still be writing: wait on event " +
                    std::to_string(received.event) + " first");
}

// ticktock with the tick wave's KeepGradient moved to the tock wave's stream, where nothing
// orders it after the tick's backward that writes the gradients it copies.
TEST(HazardCheck, RefusesKeepGradientOnTheOtherWavesStream) {
  for (bool offset : {true, false}) {
    SCOPED_TRACE(offset ? "with the offset" : "lockstep");
    wt::Program p = wt::ScheduleRegistry::generate("ticktock", ticktock_input(2, offset));
    for (wt::RankProgram& rank : p.ranks) {
      Stream &tick = rank.streams[0], &tock = rank.streams[1];
      const size_t keep =
          index_of(tick, [](const Instruction& i) { return i.op == OpCode::KeepGradient; });
      const Instruction kept = tick[keep];
      tick.erase(tick.begin() + std::ptrdiff_t(keep));
      const size_t first_wait =
          index_of(tock, [](const Instruction& i) { return i.op == OpCode::Wait; });
      tock.insert(tock.begin() + std::ptrdiff_t(first_wait + 1), kept);
    }
    const std::string e = refusal(p, 1);
    EXPECT_HAS(e, "rank 0: keep_grad stage=0 (stream 1) reads stage 0's gradients");
    EXPECT_HAS(e, "that bwd stage=0 slot=0 batch=0");
    EXPECT_HAS(e, "(stream 0) writes, with no event ordering them");
  }
}

// ticktock with the tock's Wait for the tick's kept gradient moved after the tock mixes it in
// (tests/mpi/test_strict_device_bugs.cpp shows the strict device catching it removed at run
// time).
TEST(HazardCheck, RefusesTheCrossWaveMixWithoutItsWait) {
  wt::Program p = wt::ScheduleRegistry::generate("ticktock", ticktock_input(2, true));
  for (wt::RankProgram& rank : p.ranks) {
    Stream& tock = rank.streams[1];
    const size_t keep =
        index_of(tock, [](const Instruction& i) { return i.op == OpCode::KeepGradient; });
    ASSERT_EQ(tock[keep - 1].op, OpCode::Wait);
    move(tock, keep - 1, keep + 1);  // after KeepGradient and AddKeptGradient
  }
  const std::string e = refusal(p, 1);
  EXPECT_HAS(e, "rank 0: ");
  EXPECT_HAS(e, "stage 0's kept gradient");
  EXPECT_HAS(e, "with no event ordering them");
}

namespace {

Instruction op(OpCode code, int stage, int slot, int batch) {
  Instruction i{code};
  i.stage = stage;
  i.slot = slot;
  i.batch = batch;
  return i;
}
Instruction message(OpCode code, int stage, int batch, int peer, int event) {
  Instruction i = op(code, stage, 0, batch);
  i.peer = peer;
  i.event = event;
  i.bytes = 400;
  i.tag = code == OpCode::SendActivation || code == OpCode::RecvActivation ? 0 : 1;
  return i;
}
Instruction wait(int event) {
  Instruction i{OpCode::Wait};
  i.event = event;
  return i;
}

// Two stages on two ranks, two global batches one after the other through one slot: rank 0 runs
// stage 0 of batch 0 and sends its activation, then, if `reuse_early`, loads and runs batch 1 in
// the same slot before waiting for that send, overwriting the activation being sent.
wt::Program one_slot_pipeline(bool reuse_early) {
  wt::Program p;
  p.schedule = "one-slot";
  p.world_size = 2;
  p.global_batches = 2;
  p.events = 4;
  p.groups = {{0, 1}};
  Stream first;
  for (int b = 0; b < 2; ++b) {
    const int sent = 2 * b, grad = 2 * b + 1;
    first.push_back(wt::build::load(0, b, 0, 1));
    if (b == 1 && !reuse_early) first.push_back(wait(0));
    first.push_back(op(OpCode::Forward, 0, 0, b));
    first.push_back(message(OpCode::SendActivation, 0, b, 1, sent));
    first.push_back(message(OpCode::RecvGradient, 0, b, 1, grad));
    first.push_back(wait(grad));
    first.push_back(op(OpCode::Backward, 0, 0, b));
  }
  if (reuse_early) first.push_back(wait(0));
  first.push_back(wait(2));
  first.push_back(op(OpCode::Step, 0, -1, -1));
  Stream second;
  for (int b = 0; b < 2; ++b) {
    second.push_back(message(OpCode::RecvActivation, 1, b, 0, 2 * b));
    second.push_back(wait(2 * b));
    second.push_back(wt::build::load(0, b, 0, 1, true));
    second.push_back(op(OpCode::Forward, 1, 0, b));
    second.push_back(op(OpCode::Backward, 1, 0, b));
    second.push_back(message(OpCode::SendGradient, 1, b, 0, 2 * b + 1));
    second.push_back(wait(2 * b + 1));
  }
  second.push_back(op(OpCode::Step, 1, -1, -1));
  p.ranks = {wt::RankProgram{{first}}, wt::RankProgram{{second}}};
  return p;
}

}  // namespace

TEST(HazardCheck, RefusesASendsBufferOverwrittenBeforeItsWait) {
  ASSERT_NO_THROW(wt::validate_program(one_slot_pipeline(false), 2));
  const wt::Program p = one_slot_pipeline(true);
  const std::string e = refusal(p, 2);
  EXPECT_HAS(e,
             "rank 0: fwd stage=0 slot=0 batch=1 (stream 0) writes slot 0's activation "
             "entering stage 1 that " +
                 message(OpCode::SendActivation, 0, 0, 1, 0).str() +
                 " (stream 0) may still be reading: wait on event 0 first");
}

// The ticktock generator and its node-group pairing checked as data, without running any math.
// The memory claim (with the offset a rank holds about one wave's activations, without it two) is
// checked here on the instruction order a CPU rank runs; tests/e2e/ticktock_memory.sh checks it on
// real runs under the allocator's budget.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "sched/overlap_groups.hpp"
#include "sched/schedule_registry.hpp"

namespace {

// Activation bytes like a small VGG: big early layers, small late ones, a bytes-free loss.
const std::vector<int64_t> kVggLike = {100, 100, 100, 100, 25, 50, 50, 50, 12, 25, 6, 6, 1, 0};

wt::ScheduleInput ticktock_input(int world, bool offset, std::vector<int64_t> bytes) {
  wt::ScheduleInput in;
  in.world_size = world;
  in.deck.kind = "ticktock";
  in.deck.wave_offset = offset;
  const int n = static_cast<int>(bytes.size());
  in.stages.push_back(wt::StageInfo{0, n, std::vector<int64_t>(n, 4)});
  in.stages[0].node_activation_bytes = std::move(bytes);
  return in;
}

// Runs one rank's streams the way the CPU executor does (each stream until it blocks on a Wait,
// collectives complete at once) and returns the peak activation bytes held: a forward of nodes
// [b, e) allocates their bytes, a backward frees them.
int64_t cpu_order_peak(const wt::Program& p, int rank, const std::vector<int64_t>& bytes,
                       std::vector<std::string>* order = nullptr) {
  const auto& streams = p.ranks[rank].streams;
  std::vector<size_t> pos(streams.size(), 0);
  std::vector<char> done(p.events, 0);
  int64_t held = 0, peak = 0;
  auto span = [&](const wt::Instruction& ins) {
    const int b = ins.node_begin < 0 ? 0 : ins.node_begin;
    const int e = ins.node_end < 0 ? static_cast<int>(bytes.size()) : ins.node_end;
    return std::accumulate(bytes.begin() + b, bytes.begin() + e, int64_t(0));
  };
  for (bool progressed = true; progressed;) {
    progressed = false;
    for (size_t s = 0; s < streams.size(); ++s)
      for (; pos[s] < streams[s].size(); ++pos[s], progressed = true) {
        const wt::Instruction& ins = streams[s][pos[s]];
        if (ins.op == wt::OpCode::Wait && !done[ins.event]) break;
        if (ins.event >= 0) done[ins.event] = 1;
        if (ins.op == wt::OpCode::Forward) held += span(ins);
        if (ins.op == wt::OpCode::Backward) held -= span(ins);
        peak = std::max(peak, held);
        if (order && (ins.op == wt::OpCode::Forward || ins.op == wt::OpCode::Backward))
          order->push_back((ins.op == wt::OpCode::Forward ? "F" : "B") +
                           std::to_string(ins.replica));
      }
  }
  for (size_t s = 0; s < streams.size(); ++s) EXPECT_EQ(pos[s], streams[s].size()) << "stuck";
  EXPECT_EQ(held, 0);
  return peak;
}

}  // namespace

TEST(OverlapGroups, CoverEveryNodeOnceAndNeverAllocateMoreThanFreed) {
  for (int groups : {1, 2, 4, 7, 100}) {
    const auto pairs = wt::overlap_groups(kVggLike, 10, groups);
    const int n = static_cast<int>(kVggLike.size());
    ASSERT_EQ(pairs.size(), size_t(std::min(groups, n)));
    int back = 10 + n, front = 10;
    int64_t freed = 0, held = 0;
    for (const auto& g : pairs) {
      EXPECT_EQ(g.backward_end, back) << "backward groups run down from the last node";
      EXPECT_LT(g.backward_begin, g.backward_end) << "every backward group has a node";
      EXPECT_EQ(g.forward_begin, front) << "forward groups run up from the first node";
      EXPECT_LE(g.forward_begin, g.forward_end);
      for (int i = g.backward_begin; i < g.backward_end; ++i) freed += kVggLike[i - 10];
      for (int i = g.forward_begin; i < g.forward_end; ++i) held += kVggLike[i - 10];
      EXPECT_LE(held, freed) << "forward group allocates more than the backward has freed";
      back = g.backward_begin;
      front = g.forward_end;
    }
    EXPECT_EQ(back, 10);
    EXPECT_EQ(front, 10 + n);
  }
}

TEST(OverlapGroups, BackwardGroupsFreeAboutEqualBytes) {
  const std::vector<int64_t> even(16, 10);
  const auto pairs = wt::overlap_groups(even, 0, 4);
  ASSERT_EQ(pairs.size(), 4u);
  for (const auto& g : pairs) {
    EXPECT_EQ(g.backward_end - g.backward_begin, 4);
    EXPECT_EQ(g.forward_end - g.forward_begin, 4);
  }
  EXPECT_THROW(wt::overlap_groups({}, 0, 4), std::invalid_argument);
}

TEST(TicktockSchedule, BothVariantsAreValidPrograms) {
  for (int world : {1, 2, 3})
    for (bool offset : {true, false}) {
      const wt::Program p =
          wt::ScheduleRegistry::generate("ticktock", ticktock_input(world, offset, kVggLike));
      EXPECT_NO_THROW(wt::validate_program(p, 1)) << world << " ranks, offset " << offset;
      ASSERT_EQ(p.ranks.size(), size_t(world));
      for (const auto& rank : p.ranks) ASSERT_EQ(rank.streams.size(), 2u) << "a stream per wave";
    }
}

TEST(TicktockSchedule, OffsetInterleavesTheWavesAndHoldsAboutOneWave) {
  const int64_t wave = std::accumulate(kVggLike.begin(), kVggLike.end(), int64_t(0));
  std::vector<std::string> order;
  const wt::Program with =
      wt::ScheduleRegistry::generate("ticktock", ticktock_input(2, true, kVggLike));
  const int64_t offset_peak = cpu_order_peak(with, 1, kVggLike, &order);
  // F0 first; the tock's forward starts before the tick's backward has ended (F1 || B0).
  ASSERT_FALSE(order.empty());
  EXPECT_EQ(order.front(), "F0");
  const auto first_f1 = std::find(order.begin(), order.end(), "F1");
  const auto last_b0 = std::find(order.rbegin(), order.rend(), "B0").base() - 1;
  EXPECT_LT(first_f1, last_b0) << "no overlap: the tock's forward waits for the whole backward";
  EXPECT_LE(offset_peak, wave) << "the tock allocated more than the tick had freed";

  const wt::Program without =
      wt::ScheduleRegistry::generate("ticktock", ticktock_input(2, false, kVggLike));
  EXPECT_EQ(cpu_order_peak(without, 1, kVggLike), 2 * wave) << "lockstep holds both waves";
}

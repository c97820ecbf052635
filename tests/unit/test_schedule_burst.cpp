// The burst generator checked as data: every plan on 1, 2, 4 and 8 ranks is a valid program under
// MPI's and NCCL's rules, a rank holds a stage exactly when it runs it, ranks beyond the widest
// stage run nothing, the all-ranks plan is gang instruction for instruction, and the validator
// catches rows that do not add up.
#include <gtest/gtest.h>

#include <functional>

#include "sched/stage_residency.hpp"
#include "schedule_inputs.hpp"

namespace {

wt::Program burst(int world, const std::vector<int>& stage_ranks) {
  wt::ScheduleInput in = wt_test::chain_of_stages(int(stage_ranks.size()), world);
  in.stage_ranks = stage_ranks;
  return wt::ScheduleRegistry::generate("burst", in);
}

// Calls `visit` with every plan of `stages` counts from {1, 2, 4, ...} up to `world`.
void for_every_plan(int world, int stages, const std::function<void(std::vector<int>)>& visit) {
  std::vector<int> counts;
  for (int g = 1; g <= world; g *= 2) counts.push_back(g);
  std::vector<size_t> index(size_t(stages), 0);
  while (true) {
    std::vector<int> plan;
    for (size_t i : index) plan.push_back(counts[i]);
    visit(plan);
    size_t k = 0;
    while (k < index.size() && ++index[k] == counts.size()) index[k++] = 0;
    if (k == index.size()) return;
  }
}

std::string text(const std::vector<int>& plan) {
  std::string s;
  for (int g : plan) s += std::to_string(g) + " ";
  return s;
}

TEST(BurstSchedule, EveryPlanIsValidAndHoldsOnlyWhatItRuns) {
  int plans = 0;
  for (int world : {1, 2, 4, 8})
    for_every_plan(world, 4, [&](const std::vector<int>& plan) {
      const wt::Program p = burst(world, plan);
      SCOPED_TRACE("world " + std::to_string(world) + " plan " + text(plan));
      EXPECT_NO_THROW(wt::validate_program(p, 4, wt::CommRules::Mpi));
      EXPECT_NO_THROW(wt::validate_program(p, 4, wt::CommRules::Nccl));
      const int widest = *std::max_element(plan.begin(), plan.end());
      for (int r = 0; r < world; ++r) {
        const wt::ResidencyPlan residency = wt::plan_residency(p, r, 4);
        for (int s = 0; s < 4; ++s)
          EXPECT_EQ(residency.stages[0][size_t(s)],
                    r < plan[size_t(s)] ? wt::Residency::Held : wt::Residency::Unused)
              << "rank " << r << " stage " << s;
        if (r >= widest) {
          EXPECT_TRUE(p.ranks[size_t(r)].streams[0].empty()) << "rank " << r;
        }
      }
      ++plans;
    });
  EXPECT_EQ(plans, 1 + 16 + 81 + 256);
}

TEST(BurstSchedule, AllRanksPlanIsGangInstructionForInstruction) {
  for (int world : {1, 2, 4, 8}) {
    wt::ScheduleInput in = wt_test::chain_of_stages(1, world, 1, {100, 5000, 300});
    in.deck.bucket_bytes = 1000;  // two buckets
    const wt::Program gang = wt::ScheduleRegistry::generate("gang", in);
    in.stage_ranks = {world};
    const wt::Program b = wt::ScheduleRegistry::generate("burst", in);
    EXPECT_EQ(b.groups, gang.groups);
    EXPECT_EQ(b.events, gang.events);
    ASSERT_EQ(b.ranks.size(), gang.ranks.size());
    for (size_t r = 0; r < b.ranks.size(); ++r) {
      ASSERT_EQ(b.ranks[r].streams.size(), gang.ranks[r].streams.size());
      const auto &mine = b.ranks[r].streams[0], &theirs = gang.ranks[r].streams[0];
      ASSERT_EQ(mine.size(), theirs.size()) << "rank " << r;
      for (size_t i = 0; i < mine.size(); ++i)
        EXPECT_EQ(mine[i].str(), theirs[i].str()) << "rank " << r << " instruction " << i;
    }
  }
}

TEST(BurstSchedule, RowsFollowTheStickyLayout) {
  // B = 16 on 4 ranks, then 2: ranks 0 and 1 keep their 4 rows and take 4 more each.
  const wt::Program p = burst(4, {4, 2});
  auto rows_of = [&](int r, wt::OpCode op, bool gradient) {
    int64_t n = 0;
    for (const wt::Instruction& i : p.ranks[size_t(r)].streams[0])
      if (i.op == op && i.gradient == gradient) n += i.rows;
    return n;
  };
  EXPECT_EQ(rows_of(0, wt::OpCode::CopyRows, false), 4);
  EXPECT_EQ(rows_of(0, wt::OpCode::RecvRows, false), 4);
  EXPECT_EQ(rows_of(2, wt::OpCode::SendRows, false), 4);
  EXPECT_EQ(rows_of(2, wt::OpCode::RecvRows, true), 4);  // its rows' gradients come back
  EXPECT_EQ(rows_of(0, wt::OpCode::SendRows, true), 4);
  // The loss's labels: rank 0 holds samples 0-3 and 12-15 (two runs, two reads).
  int label_reads = 0;
  for (const wt::Instruction& i : p.ranks[0].streams[0])
    if (i.op == wt::OpCode::LoadBatch && i.labels_only) {
      EXPECT_EQ(i.rows, 4);
      EXPECT_TRUE(i.sample_begin == 0 || i.sample_begin == 12) << i.str();
      ++label_reads;
    }
  EXPECT_EQ(label_reads, 2);
}

// The validator's negative tests: each breaks one burst program the way a generator bug would.
wt::Instruction* find(wt::Program& p, int rank, wt::OpCode op, bool gradient) {
  for (wt::Instruction& i : p.ranks[size_t(rank)].streams[0])
    if (i.op == op && i.gradient == gradient) return &i;
  return nullptr;
}

void expect_rejected(wt::Program p, const std::string& words) {
  try {
    wt::validate_program(p, 2);
    ADD_FAILURE() << "accepted; expected: " << words;
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

TEST(BurstSchedule, ValidatorCatchesRowsThatDoNotAddUp) {
  const wt::Program good = burst(4, {4, 2});
  ASSERT_NO_THROW(wt::validate_program(good, 2));
  {  // a piece lands on rows another piece fills
    wt::Program p = good;
    find(p, 0, wt::OpCode::RecvRows, false)->row_begin = 0;
    expect_rejected(p, "do not tile");
  }
  {  // a piece of a tensor of another size
    wt::Program p = good;
    find(p, 0, wt::OpCode::CopyRows, false)->total_rows = 4;
    expect_rejected(p, "different sizes");
  }
  {  // a rank copies back fewer gradient rows than it sent activation rows
    wt::Program p = good;
    find(p, 0, wt::OpCode::CopyRows, true)->rows = 2;
    expect_rejected(p, "not the rows this rank sends back");
  }
  {  // matched messages about different samples
    wt::Program p = good;
    find(p, 2, wt::OpCode::SendRows, false)->sample_begin = 9;
    expect_rejected(p, "matched with samples");
  }
}

TEST(BurstSchedule, RejectsAPlanForAnotherModelOrWorld) {
  wt::ScheduleInput in = wt_test::chain_of_stages(2, 2);
  in.stage_ranks = {2};
  EXPECT_THROW(wt::ScheduleRegistry::generate("burst", in), std::invalid_argument);
  in.stage_ranks = {2, 4};
  EXPECT_THROW(wt::ScheduleRegistry::generate("burst", in), std::invalid_argument);
  in.stage_ranks = {2, 1};
  in.global_batch = 15;  // not divisible by 2
  EXPECT_THROW(wt::ScheduleRegistry::generate("burst", in), std::invalid_argument);
}

}  // namespace

// Waterwave's Algorithm 1 (plan/colocate_pairing.hpp): the paper's Figure 5 exactly, the second
// job's ANGs beside the first's when memory allows (p > 0), one job alone in solo order, and
// every job's groups in order on random job shapes, where the algorithm as printed breaks it.
#include <gtest/gtest.h>

#include "plan/colocate_pairing.hpp"
#include "tensor/rng.hpp"

namespace {

using wt::ColocatedJobGroups;

constexpr int64_t kSplit = 100;

TEST(ColocatePairing, ReproducesFigureFive) {
  // J1 = 3 ANG + 3 DNG, J2 = 2 + 2, J3 = 2 + 2, p = 0 (the first job's peak leaves no room).
  const std::vector<ColocatedJobGroups> jobs{{3, 6, 1000}, {2, 4, 500}, {2, 4, 500}};
  const wt::ColocatePairing pairing = wt::pair_node_groups(jobs, 1000, kSplit);
  EXPECT_EQ(pairing.second_job_in_dv, 0);
  EXPECT_EQ(wt::describe_stream(pairing.av), "J1NG1 J1NG2 J1NG3 J2NG1 J2NG2 J3NG1 J3NG2 J3NG3 -");
  EXPECT_EQ(wt::describe_stream(pairing.dv), "- - - J1NG4 J1NG5 J1NG6 J2NG3 J2NG4 J3NG4");
  // The pairs the paper names: (J2NG1 || J1NG4) and (J3NG2 || J2NG3).
  EXPECT_EQ(pairing.av[3].job, 1);
  EXPECT_EQ(pairing.dv[3].group, 3);
  EXPECT_EQ(pairing.av[6].job, 2);
  EXPECT_EQ(pairing.dv[6].job, 1);
  EXPECT_EQ(wt::job_out_of_order(pairing, 3), -1);
  // The printed algorithm agrees here: the fix only adds bubbles where order would break.
  const wt::ColocatePairing printed = wt::pair_node_groups(jobs, 1000, kSplit, true);
  EXPECT_EQ(wt::describe_stream(printed.av), wt::describe_stream(pairing.av));
  EXPECT_EQ(wt::describe_stream(printed.dv), wt::describe_stream(pairing.dv));
}

TEST(ColocatePairing, SecondJobsAngsBesideTheFirstsWhenMemoryAllows) {
  // (limit - peak) / split - 1 = (1000 - 750) / 100 - 1 = 1: one of J2's ANGs beside J1's.
  const std::vector<ColocatedJobGroups> jobs{{3, 6, 750}, {2, 4, 500}};
  const wt::ColocatePairing pairing = wt::pair_node_groups(jobs, 1000, kSplit);
  EXPECT_EQ(pairing.second_job_in_dv, 1);
  EXPECT_EQ(wt::describe_stream(pairing.av), "J1NG1 J1NG2 J1NG3 J2NG2 J2NG3 J2NG4");
  EXPECT_EQ(wt::describe_stream(pairing.dv), "- - J2NG1 J1NG4 J1NG5 J1NG6");
  EXPECT_EQ(wt::job_out_of_order(pairing, 2), -1);
  // p is clamped to the second job's ANG count, however much memory there is.
  EXPECT_EQ(wt::pair_node_groups(jobs, 1'000'000, kSplit).second_job_in_dv, 2);
  // ... and to the first job's: they run beside its ANGs (as printed, a first job with fewer ANGs
  // sent the second job's before the start of the stream).
  const wt::ColocatePairing few = wt::pair_node_groups({{1, 4, 0}, {3, 4, 0}}, 1'000'000, kSplit);
  EXPECT_EQ(few.second_job_in_dv, 1);
  EXPECT_EQ(wt::describe_stream(few.dv), "J2NG1 J1NG2 J1NG3 J1NG4");
  EXPECT_EQ(wt::describe_stream(few.av), "J1NG1 J2NG2 J2NG3 J2NG4");
}

TEST(ColocatePairing, OneJobRunsItsGroupsInSoloOrder) {
  const wt::ColocatePairing pairing = wt::pair_node_groups({{3, 7, 100}}, 1000, kSplit);
  std::vector<int> sequence;
  for (int k = 0; k < pairing.pairs(); ++k) {
    // Never two groups of one job in one pair.
    EXPECT_TRUE(pairing.av[size_t(k)].hole() || pairing.dv[size_t(k)].hole()) << k;
    for (const auto* stream : {&pairing.av, &pairing.dv})
      if (!(*stream)[size_t(k)].hole()) sequence.push_back((*stream)[size_t(k)].group);
  }
  EXPECT_EQ(sequence, (std::vector<int>{0, 1, 2, 3, 4, 5, 6}));
}

TEST(ColocatePairing, PrintedAlgorithmBreaksAJobsOrderTheFixKeepsIt) {
  // J2's DNGs alternate streams as the last job: as printed, its NG2 (dv) and NG3 (av) land in
  // the same pair.
  const std::vector<ColocatedJobGroups> jobs{{3, 4, 1000}, {1, 4, 500}};
  const wt::ColocatePairing printed = wt::pair_node_groups(jobs, 1000, kSplit, true);
  EXPECT_EQ(wt::job_out_of_order(printed, 2), 1)
      << wt::describe_stream(printed.av) << " / " << wt::describe_stream(printed.dv);
  const wt::ColocatePairing fixed = wt::pair_node_groups(jobs, 1000, kSplit);
  EXPECT_EQ(wt::job_out_of_order(fixed, 2), -1);
  EXPECT_EQ(wt::describe_stream(fixed.av), "J1NG1 J1NG2 J1NG3 J2NG1 - J2NG3 -");
  EXPECT_EQ(wt::describe_stream(fixed.dv), "- - - J1NG4 J2NG2 - J2NG4");
}

TEST(ColocatePairing, EveryJobsGroupsOnceAndInOrderOnRandomShapes) {
  wt::Rng rng(11);
  int printed_broken = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    const int k = 1 + int(rng.below(5));
    std::vector<ColocatedJobGroups> jobs;
    int total_groups = 0;
    for (int j = 0; j < k; ++j) {
      const int total = 1 + int(rng.below(9));
      jobs.push_back({int(rng.below(uint64_t(total) + 1)), total, int64_t(rng.below(1000))});
      total_groups += total;
    }
    const int64_t limit = 500 + int64_t(rng.below(1500));
    const wt::ColocatePairing pairing = wt::pair_node_groups(jobs, limit, kSplit);
    std::string shape;
    for (const auto& j : jobs)
      shape += std::to_string(j.allocating) + "+" + std::to_string(j.total - j.allocating) + " ";
    ASSERT_EQ(wt::job_out_of_order(pairing, k), -1)
        << "trial " << trial << ": " << shape << "/ " << wt::describe_stream(pairing.av) << " / "
        << wt::describe_stream(pairing.dv);
    int placed = 0;
    for (int s = 0; s < pairing.pairs(); ++s)
      placed += !pairing.av[size_t(s)].hole() + !pairing.dv[size_t(s)].hole();
    ASSERT_EQ(placed, total_groups) << "trial " << trial;
    printed_broken += wt::job_out_of_order(wt::pair_node_groups(jobs, limit, kSplit, true), k) >= 0;
  }
  EXPECT_GT(printed_broken, 0);  // the shapes include the ones the printed algorithm gets wrong
}

TEST(ColocatePairing, RefusesJobsWithoutGroupsAndAZeroSplit) {
  EXPECT_THROW(wt::pair_node_groups({{0, 0, 0}}, 100, kSplit), std::invalid_argument);
  EXPECT_THROW(wt::pair_node_groups({{1, 2, 0}}, 100, 0), std::invalid_argument);
}

}  // namespace

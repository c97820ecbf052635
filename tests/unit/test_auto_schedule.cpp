// schedule.kind = "auto" (app/auto/): the candidate list, the choice a checkpoint records, and
// the ranking's order and memory rule on a device model.
#include <gtest/gtest.h>

#include <algorithm>

#include "app/auto/auto_candidates.hpp"
#include "app/auto/auto_ranking.hpp"
#include "deck/deck_parser.hpp"
#include "model/graph.hpp"
#include "pricing/device_model.hpp"
#include "util/input_error.hpp"

namespace {

wt::RunConfig lenet_deck(int64_t global_batch) {
  wt::RunConfig c;
  c.model.file = WT_SOURCE_DIR "/models/lenet.toml";
  c.train.global_batch = global_batch;
  c.schedule.kind = "auto";
  return c;
}

std::vector<std::string> names(const std::vector<wt::AutoCandidate>& list) {
  std::vector<std::string> n;
  for (const wt::AutoCandidate& c : list) n.push_back(c.name);
  return n;
}

}  // namespace

TEST(AutoCandidates, EverySchedulesSettingsOnSeveralRanksAndGangAloneOnOne) {
  const auto list = wt::auto_candidates(lenet_deck(64), 2);
  EXPECT_EQ(names(list),
            (std::vector<std::string>{
                "gang, buckets 1.0 MiB", "gang, buckets 4.0 MiB", "gang, buckets 16.0 MiB",
                "pipeline, microbatches 1", "pipeline, microbatches 2", "pipeline, microbatches 4",
                "pipeline, microbatches 8", "waves", "ticktock", "burst, amplification 1.5",
                "burst, amplification 2", "burst, amplification 4", "waves, scalednn codec"}));
  for (const wt::AutoCandidate& c : list) {
    EXPECT_NE(c.config.schedule.kind, "auto");
    EXPECT_EQ(c.lossy, c.config.compress.active()) << c.name;
  }
  // Microbatch counts that do not divide the batch are left out.
  const auto six = names(wt::auto_candidates(lenet_deck(6), 2));
  EXPECT_EQ(std::count_if(six.begin(), six.end(),
                          [](const std::string& n) { return n.rfind("pipeline", 0) == 0; }),
            2);
  EXPECT_EQ(names(wt::auto_candidates(lenet_deck(64), 1)),
            std::vector<std::string>{"gang, buckets 4.0 MiB"});
}

TEST(AutoCandidates, TheChoiceRoundTripsThroughAResolvedDeck) {
  for (const wt::AutoCandidate& c : wt::auto_candidates(lenet_deck(64), 4)) {
    const wt::ScheduleChoice recorded =
        wt::schedule_choice_in(wt::to_toml(c.config), "checkpoint.h5");
    EXPECT_EQ(wt::describe(recorded), c.name);
    const wt::RunConfig resumed = wt::with_schedule_choice(lenet_deck(64), recorded);
    EXPECT_EQ(resumed.schedule.kind, c.config.schedule.kind);
    EXPECT_EQ(resumed.schedule.microbatches, c.config.schedule.microbatches);
    EXPECT_EQ(resumed.burst.amp_limit, c.config.burst.amp_limit);
  }
  EXPECT_EQ(wt::overrides(wt::schedule_choice(wt::auto_candidates(lenet_deck(64), 2)[5].config)),
            "schedule.kind=pipeline schedule.microbatches=4");
  EXPECT_THROW(wt::schedule_choice_in("[train]\nepochs = 1\n", "c.h5"), wt::InputError);
  EXPECT_THROW(wt::schedule_choice_in("[schedule\n", "c.h5"), wt::InputError);
}

TEST(AutoRanking, FastestFittingFirstAndTheMarginDecidesWhatFits) {
  const wt::Graph graph = wt::Graph::load(WT_SOURCE_DIR "/models/lenet.toml");
  const wt::DeviceModel a100 = wt::load_device_model("a100");
  const auto list = wt::auto_candidates(lenet_deck(64), 2);
  const wt::AutoRanking open = wt::rank_auto_candidates(list, graph, a100, nullptr, 2, 0, 1.4);
  ASSERT_EQ(open.rows.size(), list.size());
  for (size_t i = 1; i < open.rows.size(); ++i)
    EXPECT_GE(open.rows[i - 1].samples_per_s, open.rows[i].samples_per_s);
  int64_t gang_peak = 0, least_peak = INT64_MAX;
  for (const wt::RankedCandidate& r : open.rows) {
    EXPECT_TRUE(r.fits && r.impossible.empty()) << r.name;
    if (r.name == "gang, buckets 4.0 MiB") gang_peak = r.peak_bytes;
    least_peak = std::min(least_peak, r.peak_bytes);
  }
  ASSERT_LT(least_peak, gang_peak);
  // A limit between the least need and gang's, both times the margin: gang does not fit, the
  // choice is a fitting candidate, and every fitting row comes before every other.
  const auto limit = int64_t(1.4 * double(least_peak + gang_peak) / 2);
  const wt::AutoRanking tight = wt::rank_auto_candidates(list, graph, a100, nullptr, 2, limit, 1.4);
  const int pick = wt::auto_pick(tight, false);
  ASSERT_GE(pick, 0);
  EXPECT_TRUE(tight.rows[pick].fits);
  EXPECT_LE(1.4 * double(tight.rows[pick].peak_bytes), double(limit));
  bool seen_unfit = false;
  for (const wt::RankedCandidate& r : tight.rows) {
    if (r.name.rfind("gang", 0) == 0) {
      EXPECT_FALSE(r.fits);
    }
    if (!r.fits) seen_unfit = true;
    EXPECT_FALSE(r.fits == true && seen_unfit) << r.name << " ranked after one that does not fit";
  }
  EXPECT_EQ(wt::auto_pick(wt::rank_auto_candidates(list, graph, a100, nullptr, 2, least_peak, 1.4),
                          false),
            -1);  // the least need times 1.4 is above it: nothing fits
  // Lossy candidates are ranked but chosen only when allowed.
  wt::AutoRanking lossy_first = open;
  std::stable_partition(lossy_first.rows.begin(), lossy_first.rows.end(),
                        [](const wt::RankedCandidate& r) { return r.lossy; });
  EXPECT_FALSE(lossy_first.rows[wt::auto_pick(lossy_first, false)].lossy);
  EXPECT_TRUE(lossy_first.rows[wt::auto_pick(lossy_first, true)].lossy);
}

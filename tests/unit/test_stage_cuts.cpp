// Stage cuts for model-parallel schedules: only clean cuts (one tensor crosses), balanced by
// FLOPs or by a given cost per node (profiled time), and the deck's own cuts checked against what
// the schedule needs.
#include <gtest/gtest.h>

#include <algorithm>

#include "deck/component_options.hpp"
#include "model/stage_cuts.hpp"
#include "util/input_error.hpp"

namespace {

wt::Graph load(const std::string& name) {
  return wt::Graph::load(std::string(WT_SOURCE_DIR) + "/models/" + name + ".toml");
}

int node_index(const wt::Graph& g, const std::string& name) {
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (g.nodes[i].name == name) return static_cast<int>(i);
  return -1;
}

}  // namespace

// A cut inside a residual block would need two tensors to cross (the block's input is read again
// by its add), so it is not offered; the cut right after a block's output is.
TEST(StageCuts, NoCleanCutInsideAResidualBlock) {
  const wt::Graph g = load("resnet");
  const std::vector<int> clean = wt::clean_cut_points(g);
  auto is_clean = [&](int c) { return std::binary_search(clean.begin(), clean.end(), c); };
  const int stem_relu = node_index(g, "stem_relu"), s1_add = node_index(g, "s1_add");
  const int s1_relu = node_index(g, "s1_relu");
  ASSERT_GE(stem_relu, 0);
  ASSERT_GE(s1_add, 0);
  for (int c = stem_relu + 2; c <= s1_add; ++c) EXPECT_FALSE(is_clean(c)) << g.nodes[c].name;
  EXPECT_TRUE(is_clean(stem_relu + 1));  // cut before s1_conv1: only stem_relu crosses
  EXPECT_TRUE(is_clean(s1_relu + 1));
}

// The balanced cut minimises the most expensive stage: no other clean cut does better.
TEST(StageCuts, TwoStagesAreBalancedByFlops) {
  for (const char* name : {"mlp", "lenet", "resnet"}) {
    const wt::Graph g = load(name);
    const std::vector<int> cuts = wt::balanced_cuts(g, 2);
    ASSERT_EQ(cuts.size(), 1u) << name;
    std::vector<double> prefix{0};
    for (const auto& n : g.nodes) prefix.push_back(prefix.back() + n.layer->flops_per_sample());
    auto worst = [&](int c) { return std::max(prefix[c], prefix.back() - prefix[c]); };
    for (int c : wt::clean_cut_points(g))
      EXPECT_LE(worst(cuts[0]), worst(c) * 1.01 + 1e-3 * prefix.back()) << name << " cut " << c;
  }
}

// Where measured time and FLOPs disagree, the cut follows the costs it is given: here the last
// layer (a loss over many classes, say) is slow for its FLOPs, so the time-balanced cut moves
// towards the end and no other clean cut has a cheaper worst stage.
TEST(StageCuts, GivenCostsOverrideFlops) {
  const wt::Graph g = load("mlp");
  const size_t n = g.nodes.size();
  std::vector<double> seconds(n, 1e-3);
  seconds[n - 1] = 0.5;  // the loss layer
  seconds[1] = 0.2;      // fc1
  const std::vector<int> by_flops = wt::balanced_cuts(g, 2);
  const std::vector<int> by_time = wt::balanced_cuts(g, 2, seconds);
  ASSERT_EQ(by_time.size(), 1u);
  EXPECT_NE(by_flops, by_time);
  std::vector<double> prefix{0};
  for (double c : seconds) prefix.push_back(prefix.back() + c);
  auto worst = [&](int c) { return std::max(prefix[c], prefix.back() - prefix[c]); };
  for (int c : wt::clean_cut_points(g)) EXPECT_LE(worst(by_time[0]), worst(c)) << "cut " << c;
  EXPECT_EQ(by_time[0], static_cast<int>(n) - 1);  // the loss alone is the slower half
  // Three stages: the two expensive layers land in different stages.
  const std::vector<int> three = wt::balanced_cuts(g, 3, seconds);
  ASSERT_EQ(three.size(), 2u);
  EXPECT_GT(three[0], 1);
  EXPECT_EQ(three[1], static_cast<int>(n) - 1);
  EXPECT_THROW(wt::balanced_cuts(g, 2, std::vector<double>(n - 1, 1.0)), std::invalid_argument);
}

TEST(StageCuts, TooManyStagesIsAnInputError) {
  const wt::Graph g = load("mlp");
  EXPECT_THROW(wt::balanced_cuts(g, 50), std::invalid_argument);
  wt::RunConfig cfg;
  cfg.deck_path = "deck.toml";
  cfg.schedule.kind = "waves";
  try {
    wt::resolve_cuts(wt::stage_cut_options(cfg), g, 50);
    ADD_FAILURE() << "no InputError";
  } catch (const wt::InputError& e) {
    EXPECT_EQ(e.key(), "schedule.kind");
  }
}

TEST(StageCuts, DeckCutsMustGiveOneStagePerRankAndBeClean) {
  const wt::Graph g = load("resnet");
  wt::RunConfig cfg;
  cfg.deck_path = "deck.toml";
  cfg.schedule.kind = "pipeline";
  cfg.schedule.cuts = {3, 9};
  EXPECT_THROW(wt::resolve_cuts(wt::stage_cut_options(cfg), g, 2),
               wt::InputError);                   // 3 stages for 2 ranks
  cfg.schedule.cuts = {node_index(g, "s1_bn1")};  // inside a residual block
  try {
    wt::resolve_cuts(wt::stage_cut_options(cfg), g, 2);
    ADD_FAILURE() << "no InputError";
  } catch (const wt::InputError& e) {
    EXPECT_EQ(e.key(), "schedule.cuts");
    EXPECT_NE(std::string(e.what()).find("not clean"), std::string::npos) << e.what();
  }
  cfg.schedule.cuts = {node_index(g, "s1_conv1")};
  EXPECT_EQ(wt::resolve_cuts(wt::stage_cut_options(cfg), g, 2),
            std::vector<int>{node_index(g, "s1_conv1")});
}

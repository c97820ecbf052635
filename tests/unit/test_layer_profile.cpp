// The layer profiler (real forward and backward of every layer on a synthetic batch, fitted as a
// line in the batch size) and its cache file profile.h5: a round trip keeps every number, a
// damaged file is an InputError naming it, and a profile of another model is recognised.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <algorithm>
#include <csignal>
#include <fstream>
#include <map>

#include "dataset_test_util.hpp"
#include "deck/component_options.hpp"
#include "device/device_context.hpp"
#include "mem/caching_allocator.hpp"
#include "model/stage_cuts.hpp"
#include "plan/layer_profile_file.hpp"
#include "plan/layer_profiler.hpp"
#include "plan/stage_planner.hpp"
#include "test_memory.hpp"
#include "util/input_error.hpp"

namespace {

wt::Graph load(const std::string& name) {
  return wt::Graph::load(std::string(WT_SOURCE_DIR) + "/models/" + name + ".toml");
}

wt::LayerProfile sample_profile(const wt::Graph& g) {
  wt::LayerProfile p;
  p.model = g.name;
  p.device = "cpu: test, 1 thread";
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    p.nodes.push_back(g.nodes[i].name);
    p.timing.push_back({1e-6 * double(i), 2e-5 + double(i) * 1e-7, 3e-6, 4e-5 * double(i + 1)});
  }
  return p;
}

}  // namespace

// Every layer of a token model runs (the embedding gets valid ids, the per-token loss valid
// labels); the fitted lines give more time to more samples, and the big layers dominate.
TEST(LayerProfiler, MeasuresEveryLayerOfATokenModel) {
  wt::Model model(load("transformer_small"), wt::testing::memory());
  model.init(1);
  const wt::LayerProfile p = wt::measure_layer_profile(model, wt::testing::device().ops(), 8, 2);
  ASSERT_EQ(p.nodes.size(), model.graph.nodes.size());
  ASSERT_EQ(p.timing.size(), model.graph.nodes.size());
  EXPECT_EQ(p.model, "transformer_small");
  EXPECT_EQ(p.device.rfind("cpu: ", 0), 0u) << p.device;
  double total_small = 0, total_large = 0, attention = 0, adds = 0;
  for (size_t i = 0; i < p.nodes.size(); ++i) {
    EXPECT_EQ(p.nodes[i], model.graph.nodes[i].name);
    const wt::LayerTiming& t = p.timing[i];
    for (double v :
         {t.forward_fixed_s, t.forward_per_sample_s, t.backward_fixed_s, t.backward_per_sample_s})
      EXPECT_GE(v, 0.0) << p.nodes[i];
    const double s = p.forward_s(int(i), 8) + p.backward_s(int(i), 8);
    EXPECT_GT(s, 0.0) << p.nodes[i];
    total_small += p.forward_s(int(i), 2) + p.backward_s(int(i), 2);
    total_large += s;
    if (model.graph.nodes[i].type == "causal_self_attention") attention += s;
    if (model.graph.nodes[i].type == "add") adds += s;
  }
  EXPECT_GT(total_large, total_small);
  EXPECT_GT(attention, 5 * adds);  // 31 MFLOP per sample against a few element-wise adds
  // Profiling leaves no gradient behind.
  for (const wt::Stage& st : model.stages)
    for (int64_t i = 0; i < st.grads.numel(); ++i) ASSERT_EQ(st.grads.data()[i], 0.0f);
}

TEST(LayerProfileFile, RoundTripKeepsEveryNumber) {
  wt::testutil::TempDir tmp("profile");
  const wt::Graph g = load("lenet");
  const wt::LayerProfile p = sample_profile(g);
  const std::string path = tmp.file("profile.h5");
  wt::save_layer_profile(path, p);
  const wt::LayerProfile q = wt::load_layer_profile(path);
  EXPECT_EQ(q.model, p.model);
  EXPECT_EQ(q.device, p.device);
  EXPECT_EQ(q.nodes, p.nodes);
  ASSERT_EQ(q.timing.size(), p.timing.size());
  for (size_t i = 0; i < p.timing.size(); ++i) {
    EXPECT_EQ(q.timing[i].forward_fixed_s, p.timing[i].forward_fixed_s);
    EXPECT_EQ(q.timing[i].forward_per_sample_s, p.timing[i].forward_per_sample_s);
    EXPECT_EQ(q.timing[i].backward_fixed_s, p.timing[i].backward_fixed_s);
    EXPECT_EQ(q.timing[i].backward_per_sample_s, p.timing[i].backward_per_sample_s);
  }
  EXPECT_EQ(wt::profile_mismatch(q, g), "");
  EXPECT_NE(wt::profile_mismatch(q, load("mlp")).find("'lenet', not 'mlp'"), std::string::npos);
  wt::LayerProfile renamed = q;
  renamed.nodes[2] = "other";
  EXPECT_NE(wt::profile_mismatch(renamed, g).find("'other'"), std::string::npos);
}

TEST(LayerProfileFile, DamagedFileIsAnInputErrorNamingIt) {
  wt::testutil::TempDir tmp("profile");
  const std::string path = tmp.file("profile.h5");
  wt::save_layer_profile(path, sample_profile(load("mlp")));
  // Truncated: the header survives at most.
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  ASSERT_GT(bytes.size(), 1000u);
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), std::streamsize(bytes.size() / 2));
  }
  try {
    wt::load_layer_profile(path);
    FAIL() << "a truncated profile loaded";
  } catch (const wt::InputError& e) {
    EXPECT_EQ(e.file(), path);
  }
  // Not HDF5 at all.
  std::ofstream(path, std::ios::trunc) << "not a profile\n";
  EXPECT_THROW(wt::load_layer_profile(path), wt::InputError);
}

// A cache write that fails says why and leaves no temporary file: here the process's file size
// limit (ulimit -f, with SIGXFSZ ignored as wavetrain's main does) stops the write with EFBIG.
TEST(LayerProfileFile, FailedWriteSaysWhyAndLeavesNoTemporary) {
  wt::testutil::TempDir tmp("profile");
  const std::string path = tmp.file("profile.h5");
  struct rlimit saved {};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &saved), 0);
  if (saved.rlim_max != RLIM_INFINITY && saved.rlim_max < 4096) GTEST_SKIP() << "limit too low";
  void (*previous)(int) = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = saved;
  small.rlim_cur = 1024;  // below the profile's size (a few KB)
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  std::string what;
  try {
    wt::save_layer_profile(path, sample_profile(load("lenet")));
  } catch (const std::runtime_error& e) {
    what = e.what();
  }
  setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, previous);
  EXPECT_NE(what.find("File too large"), std::string::npos) << "no reason given: " << what;
  EXPECT_NE(what.find(path + ".tmp"), std::string::npos) << what;
  EXPECT_FALSE(std::ifstream(path + ".tmp").good()) << "the temporary file was left behind";
  EXPECT_FALSE(std::ifstream(path).good());
}

// Profiled time decides the cut when the deck asks for it; a cached profile is used as it is, so
// a profile that says the loss layer is slow moves the cut, and a cut from a checkpoint wins.
TEST(StagePlanner, UsesTheCachedProfileAndKeepsCheckpointCuts) {
  wt::testutil::TempDir tmp("plan");
  const wt::Graph g = load("mlp");
  wt::LayerProfile p = sample_profile(g);
  for (auto& t : p.timing) t = {0, 1e-5, 0, 1e-5};
  p.timing.back() = {0, 1.0, 0, 1.0};  // the loss layer alone outweighs the rest
  wt::save_layer_profile(tmp.file("profile.h5"), p);
  wt::RunConfig cfg;
  cfg.model.file = std::string(WT_SOURCE_DIR) + "/models/mlp.toml";
  cfg.schedule.kind = "waves";
  const std::string run_dir = tmp.file("");
  wt::StagePlan plan = wt::plan_stages(wt::stage_plan_options(cfg), g, 2, run_dir,
                                       wt::ProfileCache::ReadOnly, wt::testing::device());
  EXPECT_EQ(plan.basis, "profile");
  EXPECT_NE(plan.description.find("profile.h5, cached"), std::string::npos) << plan.description;
  EXPECT_EQ(plan.cuts, std::vector<int>{static_cast<int>(g.nodes.size()) - 1});
  cfg.schedule.balance = "flops";
  plan = wt::plan_stages(wt::stage_plan_options(cfg), g, 2, run_dir, wt::ProfileCache::ReadOnly,
                         wt::testing::device());
  EXPECT_EQ(plan.basis, "flops");
  EXPECT_EQ(plan.cuts, wt::balanced_cuts(g, 2));
  cfg.schedule.balance = "profile";
  plan = wt::plan_stages(wt::stage_plan_options(cfg), g, 2, run_dir, wt::ProfileCache::ReadOnly,
                         wt::testing::device(), {3});
  EXPECT_EQ(plan.basis, "checkpoint");
  EXPECT_EQ(plan.cuts, std::vector<int>{3});
}

// Issue 18: profiling is synchronous device work whose tensors are freed by host code as it goes;
// on the strict device those frees once waited for a synchronisation that never came, so the
// profile held every block it had ever allocated (LeNet: 256 blocks, 358.6 MB against 54.5 MB on
// the host) and reset_peaks() left that as the run's peak. Now the profile's memory rises and
// falls as on the host, and nothing of it is left in use, reserved or in the peaks.
TEST(StagePlanner, ProfilingUsesTheSameMemoryOnTheStrictDeviceAndLeavesNone) {
  wt::RunConfig cfg;
  cfg.model.file = std::string(WT_SOURCE_DIR) + "/models/mlp.toml";
  cfg.schedule.kind = "waves";
  wt::StagePlanOptions options = wt::stage_plan_options(cfg);
  options.stage_batch = 32;
  const wt::Graph g = load("mlp");
  auto profile = [&](wt::DeviceContext& device) {
    size_t highest = 0;  // the profile's own peak, seen by an observer (reset_peaks hides it)
    const int handle = device.allocator().add_observer(
        [&](const wt::MemoryStats& s, const std::map<int, wt::JobMemory>&) {
          highest = std::max(highest, s.in_use);
        });
    wt::obtain_layer_profile(options, g, "", wt::ProfileCache::ReadOnly, device);
    device.allocator().remove_observer(handle);
    const wt::MemoryStats s = device.allocator().stats();
    EXPECT_EQ(s.in_use, 0u);
    EXPECT_EQ(s.reserved, 0u);
    EXPECT_EQ(s.peak_in_use, 0u);
    EXPECT_EQ(s.peak_reserved, 0u);
    return highest;
  };
  wt::DeviceContext host;
  wt::DeviceContext strict(0, wt::DeviceKind::Strict, 1);
  const size_t on_host = profile(host);
  EXPECT_GT(on_host, 0u);
  EXPECT_EQ(profile(strict), on_host);
}

// The burst planner reads a profile at every per-rank batch it may choose: times measured there
// are used as measured, a time between two measured sizes is interpolated between them, and
// outside the measured sizes the fitted line holds.
TEST(LayerProfile, MeasuredBatchSizesAreReadAsMeasuredAndInterpolated) {
  wt::LayerProfile p = sample_profile(load("mlp"));
  p.batches = {4, 8, 16};
  p.timing[1].forward_at = {1e-3, 1e-3, 3e-3};  // flat, then steep: far from any line
  p.timing[1].backward_at = {2e-3, 4e-3, 8e-3};
  EXPECT_DOUBLE_EQ(p.forward_s(1, 4), 1e-3);
  EXPECT_DOUBLE_EQ(p.forward_s(1, 8), 1e-3);
  EXPECT_DOUBLE_EQ(p.forward_s(1, 12), 2e-3);
  EXPECT_DOUBLE_EQ(p.backward_s(1, 6), 3e-3);
  const wt::LayerTiming& t = p.timing[1];
  EXPECT_DOUBLE_EQ(p.forward_s(1, 64), t.forward_fixed_s + 64 * t.forward_per_sample_s);
  EXPECT_DOUBLE_EQ(p.forward_s(1, 2), t.forward_fixed_s + 2 * t.forward_per_sample_s);
  // A node measured nowhere else (its vectors empty) keeps its line everywhere.
  EXPECT_DOUBLE_EQ(p.forward_s(0, 8),
                   p.timing[0].forward_fixed_s + 8 * p.timing[0].forward_per_sample_s);
}

TEST(LayerProfiler, MeasuresEveryLayerAtEveryAskedBatchSizeAndTheFileKeepsThem) {
  wt::Model model(load("mlp"), wt::testing::memory());
  model.init(1);
  const wt::LayerProfile p =
      wt::measure_layer_profile(model, wt::testing::device().ops(), 16, 2, {1, 8, 16});
  EXPECT_EQ(p.batches, (std::vector<int64_t>{1, 4, 8, 16}));  // 4 = 16/4, the line's small end
  for (size_t i = 0; i < p.timing.size(); ++i) {
    ASSERT_EQ(p.timing[i].forward_at.size(), 4u) << p.nodes[i];
    ASSERT_EQ(p.timing[i].backward_at.size(), 4u) << p.nodes[i];
    EXPECT_DOUBLE_EQ(p.forward_s(int(i), 8), p.timing[i].forward_at[2]);
  }
  wt::testutil::TempDir tmp("profile");
  const std::string path = tmp.file("profile.h5");
  wt::save_layer_profile(path, p);
  const wt::LayerProfile q = wt::load_layer_profile(path);
  EXPECT_EQ(q.batches, p.batches);
  for (size_t i = 0; i < p.timing.size(); ++i) {
    EXPECT_EQ(q.timing[i].forward_at, p.timing[i].forward_at);
    EXPECT_EQ(q.timing[i].backward_at, p.timing[i].backward_at);
  }
  // A cached profile without a size the planner needs is measured again.
  wt::DeviceContext device(0);
  wt::StagePlanOptions options;
  options.model_file = std::string(WT_SOURCE_DIR) + "/models/mlp.toml";
  options.stage_batch = 16;
  options.profile_batches = {16, 8, 2};
  wt::save_layer_profile(tmp.file("profile.h5"), p);
  const wt::ObtainedProfile again = wt::obtain_layer_profile(options, load("mlp"), tmp.file(""),
                                                             wt::ProfileCache::ReadOnly, device);
  EXPECT_TRUE(again.measured);
  ASSERT_EQ(again.warnings.size(), 1u);
  EXPECT_NE(again.warnings[0].find("not measured at 2 samples"), std::string::npos)
      << again.warnings[0];
  options.profile_batches = {16, 8};
  EXPECT_FALSE(wt::obtain_layer_profile(options, load("mlp"), tmp.file(""),
                                        wt::ProfileCache::ReadOnly, device)
                   .measured);
}
